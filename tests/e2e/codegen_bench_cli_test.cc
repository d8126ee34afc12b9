// SPDX-License-Identifier: Apache-2.0
// fxc codegen --bench --json end to end on tiny_cnn: the interleaved, alone and cold
// figures are all there, cold runs only when asked for by a non-zero --evict-mb, and
// fused outputs agree with unfused. (Timings themselves are not asserted: the machine
// is shared.)

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_runner.h"

namespace fx {
namespace {

using testing::run_fxc;

const std::string kModel = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";

nlohmann::json bench(const std::string& evict_mb) {
  auto r = run_fxc({"-q", "codegen", kModel, "--opt-level", "2", "--threshold", "0", "--bench", "3",
                    "--threads", "1", "--json", "--evict-mb", evict_mb});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(CodegenBenchCli, TimesTheFusedProgramInterleavedAloneAndCold) {
  auto j = bench("1");
  EXPECT_EQ(j["runs"], 3);
  EXPECT_TRUE(j["equivalent"].get<bool>());
  for (const char* k : {"unfused", "fused", "fused_alone", "fused_cold"}) {
    SCOPED_TRACE(k);
    EXPECT_GT(j[k]["median_ms"].get<double>(), 0.0);
    EXPECT_LE(j[k]["min_ms"].get<double>(), j[k]["median_ms"].get<double>());
  }
  EXPECT_DOUBLE_EQ(j["fused_cold"]["evict_mb"].get<double>(), 1.0);
}

TEST(CodegenBenchCli, EvictZeroLeavesTheColdRunsOut) {
  auto j = bench("0");
  EXPECT_DOUBLE_EQ(j["fused_cold"]["median_ms"].get<double>(), 0.0);
  EXPECT_GT(j["fused_alone"]["median_ms"].get<double>(), 0.0);
}

}  // namespace
}  // namespace fx
