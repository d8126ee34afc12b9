// SPDX-License-Identifier: Apache-2.0
// `fxc profile` and `fxc trace-import` end to end, on the bundled sample model.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "profile/child_process.h"

namespace fx {
namespace {

using nlohmann::json;

const std::string kModel = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "fx_profile_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

ChildResult fxc(std::vector<std::string> args) {
  args.insert(args.begin(), FX_FXC_PATH);
  ChildOptions o;
  o.timeout_s = 120;
  return run_child(args, o);
}

TEST(FxcProfile, JsonHasKernelsMedianAndPeakMemoryAndTraceHasCompleteEvents) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << kModel << " is missing";
  const std::string trace = temp_path("tiny_cnn_trace.json");
  std::filesystem::remove(trace);
  auto r = fxc({"profile", kModel, "--json", "--runs", "3", "--warmup", "1", "--threads", "2",
                "--trace", trace});
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  json j = json::parse(r.out);
  for (const char* key :
       {"kernels", "median_ms", "peak_activation_bytes", "threads", "runs", "device", "trace"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["isolated"], true);  // profiled in a child process
  EXPECT_GT(j["median_ms"].get<double>(), 0);
  EXPECT_GT(j["peak_activation_bytes"].get<int64_t>(), 0);
  // tiny_cnn has 23 nodes, 18 in canonical form (its 5 BNs folded into their Convs),
  // one kernel each when unfused.
  ASSERT_EQ(j["kernels"].size(), 18u);
  double share = 0;
  for (const auto& k : j["kernels"]) {
    EXPECT_GE(k["median_us"].get<double>(), 0);
    share += k["share"].get<double>();
  }
  EXPECT_NEAR(share, 1.0, 1e-6);

  std::ifstream in(trace);
  ASSERT_TRUE(in) << trace << " was not written";
  json t = json::parse(in);
  int complete = 0;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  EXPECT_EQ(complete, 18);

  // The trace reads back as the same kernels.
  auto imported = fxc({"trace-import", trace, "--json"});
  ASSERT_TRUE(imported.ok()) << imported.err;
  json ij = json::parse(imported.out);
  EXPECT_EQ(ij["kernels"].size(), 18u);
  EXPECT_EQ(ij["source"], "fusion-explorer cpu");
}

TEST(FxcProfile, TextTableNamesKernelsAndTotal) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << kModel << " is missing";
  auto r = fxc({"profile", kModel, "--runs", "2", "--warmup", "0", "--in-process"});
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Conv"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Total"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("By op type"), std::string::npos) << r.out;
}

TEST(FxcProfile, ChildTimeoutIsAOneLineErrorWithExitCode2) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << kModel << " is missing";
  auto r = fxc({"profile", kModel, "--runs", "1000000", "--timeout", "0.5"});
  EXPECT_EQ(r.status, ChildResult::Status::Exited);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

bool process_gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto paren = line.rfind(')');
  return paren != std::string::npos && line.size() > paren + 2 && line[paren + 2] == 'Z';
}

TEST(FxcProfile, TheProfilingChildDiesWithItsParent) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << kModel << " is missing";
  // A shell starts an endless profile as its child, in another session so that the
  // group kill of run_child cannot reach it, and exits: the profile must end too.
  std::string cmd = std::string("setsid ") + FX_FXC_PATH + " profile " + kModel +
                    " --in-process --warmup 0 --runs 1000000 --parent-pid $$ >/dev/null "
                    "2>&1 & echo $!; sleep 0.5";
  ChildOptions o;
  o.timeout_s = 20;
  auto r = run_child({"sh", "-c", cmd}, o);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  const int pid = std::stoi(r.out);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = process_gone(pid);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!gone) ::kill(pid, SIGKILL);
  EXPECT_TRUE(gone) << "the profiling process outlived its parent";
}

TEST(FxcProfile, BadModelAndBadTraceAreErrorsNamingTheFile) {
  const std::string bogus = temp_path("not_a_model.onnx");
  std::ofstream(bogus) << "this is not protobuf";
  auto r = fxc({"profile", bogus});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find(bogus), std::string::npos) << r.err;

  const std::string bad_trace = temp_path("bad_trace.json");
  std::ofstream(bad_trace) << "{\"traceEvents\": 3}";
  auto t = fxc({"trace-import", bad_trace});
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find(bad_trace), std::string::npos) << t.err;
}

}  // namespace
}  // namespace fx
