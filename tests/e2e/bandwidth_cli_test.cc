// SPDX-License-Identifier: Apache-2.0
// fxc codegen --bandwidth end to end on a small tensor: every kernel has one figure per
// repetition, the copy is the reference (ratio 1), and the summary fields agree with
// the per-repetition figures. (Timings themselves are not asserted: the machine is
// shared.)

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace fx {
namespace {

using testing::run_fxc;

TEST(BandwidthCli, JsonHasOneFigurePerRepetitionAndTheCopyAsReference) {
  auto r = run_fxc({"-q", "codegen", "--bandwidth", "1", "--bench", "5", "--reps", "3", "--threads",
                    "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["repetitions"], 3);
  EXPECT_EQ(j["runs_per_repetition"], 5);
  EXPECT_EQ(j["reference"], "stream-copy");
  ASSERT_EQ(j["kernels"].size(), 4u);
  std::vector<std::string> ids;
  for (const auto& k : j["kernels"]) {
    ids.push_back(k["id"]);
    ASSERT_EQ(k["gbs"].size(), 3u) << k["id"];
    ASSERT_EQ(k["ratio"].size(), 3u) << k["id"];
    std::vector<double> g = k["gbs"];
    // best: the fastest single run, at least the fastest repetition's median
    EXPECT_GE(k["best_gbs"].get<double>(), *std::max_element(g.begin(), g.end()));
    std::vector<double> q = k["ratio"];
    EXPECT_DOUBLE_EQ(k["ratio_min"].get<double>(), *std::min_element(q.begin(), q.end()));
    for (double x : q) EXPECT_GT(x, 0);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"stream-copy", "chain", "layernorm", "softmax"}));
  for (double x : j["kernels"][0]["ratio"]) EXPECT_DOUBLE_EQ(x, 1.0);
  EXPECT_DOUBLE_EQ(j["kernels"][0]["best_vs_best"].get<double>(), 1.0);
}

}  // namespace
}  // namespace fx
