// SPDX-License-Identifier: Apache-2.0
// Before/after profiling (docs/before_after.md): in process through run_before_after,
// and end to end through `fxc profile --opt-level 2 --json` (a child process that
// survives a crashing kernel). Kernels are broken on purpose with the test hook
// FXC_TEST_BREAK_GROUP (fault_injection.h).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "device/device_presets.h"
#include "onnx/model_loader.h"
#include "profile/before_after.h"
#include "profile/before_after_child.h"
#include "profile/child_process.h"

namespace fx {
namespace {

using nlohmann::json;

const std::string kCnn = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";
const std::string kTransformer = std::string(FX_RESOURCES_DIR) + "/models/tiny_transformer.onnx";

ChildResult fxc(std::vector<std::string> args) {
  args.insert(args.begin(), FX_FXC_PATH);
  ChildOptions o;
  o.timeout_s = 120;
  return run_child(args, o);
}

// Sets an environment variable for the scope (the fxc children inherit it).
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const std::string& v) : name(n) { ::setenv(n, v.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

// What every well-formed result must hold, whatever the machine's speed.
void expect_consistent(const json& d) {
  for (const char* key : {"schema", "before", "after", "speedup", "max_abs_error", "outputs_match",
                          "groups", "device", "estimate_profile"})
    ASSERT_TRUE(d.contains(key)) << key;
  EXPECT_EQ(d["schema"], "fusion-explorer/before-after");
  const double b = d["before"]["median_ms"], a = d["after"]["median_ms"];
  EXPECT_GT(b, 0);
  EXPECT_GT(a, 0);
  EXPECT_NEAR(d["speedup"].get<double>(), b / a, 1e-9 * b / a);
  EXPECT_LT(d["after"]["kernels"].size(), d["before"]["kernels"].size());
  std::map<std::string, double> before_us;
  for (const auto& k : d["before"]["kernels"]) before_us[k["nodes"][0]] = k["median_us"];
  std::map<std::string, double> after_us;
  for (const auto& k : d["after"]["kernels"]) after_us[k["name"]] = k["median_us"];
  int fused = 0;
  for (const auto& g : d["groups"]) {
    if (g["status"] == "fallback") {  // not fused: its members run unfused
      EXPECT_TRUE(g["measured_saved_us"].is_null()) << g["id"];
      continue;
    }
    if (g["status"] == "excluded") {
      EXPECT_TRUE(g["measured_saved_us"].is_null()) << g["id"];
      EXPECT_FALSE(g["reason"].get<std::string>().empty()) << g["id"];
      EXPECT_EQ(after_us.count(g["id"]), 0u) << g["id"] << " excluded but still a kernel";
      continue;
    }
    ++fused;
    ASSERT_TRUE(g["predicted_saved_us"].is_number()) << g["id"];
    ASSERT_TRUE(g["measured_saved_us"].is_number()) << g["id"];
    // measured = members before - after: the fused kernel, or the generated parts
    // "<id>.N" and the members they leave unfused.
    double members = 0, fused_us = 0;
    for (const auto& n : g["nodes"]) members += before_us.at(n);
    std::set<std::string> in(g["nodes"].begin(), g["nodes"].end());
    for (const auto& k : d["after"]["kernels"])
      if (in.count(k["nodes"][0].get<std::string>())) fused_us += k["median_us"].get<double>();
    EXPECT_TRUE(after_us.count(g["id"]) || after_us.count(g["id"].get<std::string>() + ".1"))
        << g["id"] << ": neither a fused kernel nor generated parts after";
    EXPECT_NEAR(g["measured_saved_us"].get<double>(), members - fused_us, 1e-6) << g["id"];
  }
  EXPECT_GT(fused, 0);
}

// With its BNs kept: folded (the default), HardSwish leaves the Conv's group for one with
// the GlobalAveragePool, which has no C++ emitter yet and would run excluded.
TEST(BeforeAfterCli, TinyCnnAtOptLevel2MatchesAndHasPerGroupRows) {
  auto r = fxc({"profile", kCnn, "--opt-level", "2", "--json", "--runs", "3", "--warmup", "1",
                "--threads", "2", "--disable-pass", "conv-bn-folding"});
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  json d = json::parse(r.out);
  expect_consistent(d);
  EXPECT_EQ(d["outputs_match"], true) << d["mismatch"];
  EXPECT_LE(d["max_abs_error"].get<double>(), 1e-3);
  EXPECT_EQ(d["opt_level"], 2);
  EXPECT_EQ(d["estimate_profile"], "cpu-host");
  for (const auto& g : d["groups"]) EXPECT_NE(g["status"], "excluded") << g["reason"];
}

TEST(BeforeAfterCli, TinyTransformerAtOptLevel2MatchesAndWritesBothTraces) {
  auto dir = std::filesystem::temp_directory_path() / "fx_before_after_tests";
  std::filesystem::create_directories(dir);
  const std::string tb = (dir / "before.json").string(), ta = (dir / "after.json").string();
  std::filesystem::remove(tb);
  std::filesystem::remove(ta);
  auto r = fxc({"profile", kTransformer, "--dim", "batch=1", "--dim", "seq=16", "--opt-level", "2",
                "--json", "--runs", "3", "--warmup", "1", "--threads", "2", "--trace-before", tb,
                "--trace-after", ta});
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  json d = json::parse(r.out);
  expect_consistent(d);
  EXPECT_EQ(d["outputs_match"], true) << d["mismatch"];
  for (const auto& [path, side] : {std::pair{tb, "before"}, std::pair{ta, "after"}}) {
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    json t = json::parse(in);
    EXPECT_EQ(t, d[side]["trace"]) << path;
  }
}

TEST(BeforeAfterCli, GroupWhoseKernelCrashesIsExcludedAndTheRestIsMeasured) {
  ScopedEnv env("FXC_TEST_BREAK_GROUP", "#1:crash");
#ifdef __SANITIZE_ADDRESS__
  // The crash is raise(SIGSEGV) on purpose: under ASan (the asan preset) the child must die of
  // the signal as it does in a normal build, not have ASan report it and exit with 1.
  const char* asan_env = std::getenv("ASAN_OPTIONS");
  const std::string asan_saved = asan_env ? asan_env : "";
  ::setenv("ASAN_OPTIONS", (asan_saved + ":handle_segv=0").c_str(), 1);
#endif
  auto r = fxc({"profile", kCnn, "--opt-level", "2", "--json", "--runs", "2", "--warmup", "1",
                "--threads", "2"});
#ifdef __SANITIZE_ADDRESS__
  ::setenv("ASAN_OPTIONS", asan_saved.c_str(), 1);
#endif
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  json d = json::parse(r.out);
  expect_consistent(d);
  const json& broken = d["groups"][1];
  EXPECT_EQ(broken["status"], "excluded");
  EXPECT_NE(broken["reason"].get<std::string>().find("SIGSEGV"), std::string::npos)
      << broken["reason"];
  EXPECT_EQ(d["outputs_match"], true);
  EXPECT_NE(d["groups"][0]["status"], "excluded");
}

TEST(BeforeAfterCli, GroupWithWrongOutputsIsExcludedWithTheDifference) {
  ScopedEnv env("FXC_TEST_BREAK_GROUP", "#0:wrong");
  auto r = fxc({"profile", kCnn, "--opt-level", "2", "--runs", "2", "--warmup", "1", "--threads",
                "2"});  // the human table
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  EXPECT_NE(r.out.find("excluded: outputs differ from the unfused run"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Outputs      match"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted on device profile cpu-host"), std::string::npos) << r.out;
}

// XLA's rule after the fact: a group whose fused kernel measures slower than its members
// is rejected, the tool says so, and the corrected plan leaves it out.
TEST(BeforeAfterCli, GroupMeasuredSlowerIsRejectedAndTheCorrectedPlanWritten) {
  ScopedEnv env("FXC_TEST_BREAK_GROUP", "#0:slow");  // +5 ms per run on the first group
  const auto plan_path = std::filesystem::temp_directory_path() / "fx_rejected_plan.json";
  std::filesystem::remove(plan_path);
  auto r = fxc({"profile", kCnn, "--opt-level", "2", "--runs", "3", "--warmup", "1", "--threads",
                "2", "--write-plan", plan_path.string()});
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  const std::string prefix = "rejected after measurement: ";
  const auto at = r.out.find(prefix);
  ASSERT_NE(at, std::string::npos) << r.out;
  const auto start = at + prefix.size();
  const std::string id = r.out.substr(start, r.out.find(' ', start) - start);
  EXPECT_NE(r.out.find(id + " +", at), std::string::npos) << r.out;
  FusionPlan p = FusionPlan::load(plan_path.string());
  const FusionGroup* g = p.find(id);
  ASSERT_NE(g, nullptr) << id;
  EXPECT_EQ(g->status, GroupStatus::Rejected);
  EXPECT_NE(g->reason.find("rejected after measurement"), std::string::npos) << g->reason;
  // The other groups keep the default plan's decisions.
  EXPECT_FALSE(p.accepted().empty());
  for (const FusionGroup* a : p.accepted()) EXPECT_NE(a->id, id);

  // The JSON result names it too.
  auto j = fxc({"profile", kCnn, "--opt-level", "2", "--runs", "3", "--warmup", "1", "--threads",
                "2", "--json"});
  ASSERT_TRUE(j.ok()) << j.describe() << "\n" << j.err;
  const json d = json::parse(j.out);
  ASSERT_TRUE(d.contains("rejected_after_measurement"));
  ASSERT_FALSE(d["rejected_after_measurement"].empty());
  EXPECT_EQ(d["rejected_after_measurement"][0]["id"], id);
  EXPECT_GT(d["rejected_after_measurement"][0]["slower_us"].get<double>(), 1000);
}

// Sets an environment variable for the scope and puts back what was there before.
struct RestoringEnv {
  std::string name;
  std::optional<std::string> old;
  RestoringEnv(const char* n, const std::string& v) : name(n) {
    if (const char* o = std::getenv(n)) old = o;
    ::setenv(n, v.c_str(), 1);
  }
  ~RestoringEnv() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

// The autotune cache through the CLI (the suites run with it off): a profile that
// measures a group slower (+5 ms injected) records it, and the next default plan leaves
// it out and says so; with the cache off the same plan keeps it.
TEST(BeforeAfterCli, AGroupMeasuredSlowerIsLeftOutOfTheNextDefaultPlan) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("fx_autotune_cli_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  RestoringEnv xdg("XDG_CACHE_HOME", dir.string());
  const std::vector<std::string> codegen = {"codegen",   kCnn,          "--opt-level", "2",
                                            "--device",  "nvidia-h100", "--bench",     "1",
                                            "--threads", "2",           "--json"};
  {
    RestoringEnv on("FX_AUTOTUNE_CACHE", "on");
    {
      RestoringEnv slow("FXC_TEST_BREAK_GROUP", "#0:slow");
      auto r = fxc({"profile", kCnn, "--autotune", "--estimate-device", "nvidia-h100", "--runs",
                    "3", "--warmup", "1", "--threads", "2"});
      ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
      EXPECT_NE(r.out.find("Autotune "), std::string::npos) << r.out;
    }
    auto c = fxc(codegen);
    ASSERT_TRUE(c.ok()) << c.describe() << "\n" << c.err;
    const json on_doc = json::parse(c.out);
    ASSERT_TRUE(on_doc["autotune_cache"]["enabled"].get<bool>()) << c.out;
    const int rejected = on_doc["autotune_cache"]["rejected"].get<int>();
    EXPECT_GE(rejected, 1) << c.out;
    EXPECT_NE(c.err.find("measured slower on this CPU left out"), std::string::npos) << c.err;

    RestoringEnv off("FX_AUTOTUNE_CACHE", "off");
    auto o = fxc(codegen);
    ASSERT_TRUE(o.ok()) << o.describe() << "\n" << o.err;
    const json off_doc = json::parse(o.out);
    EXPECT_FALSE(off_doc["autotune_cache"]["enabled"].get<bool>());
    EXPECT_EQ(off_doc["groups"].get<int>(), on_doc["groups"].get<int>() + rejected);
  }
  std::filesystem::remove_all(dir);
}

TEST(BeforeAfterCli, CudaWithoutGpuIsAClearErrorAndNonZeroExit) {
  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  auto r = fxc({"profile", kCnn, "--opt-level", "2", "--device", "cuda"});
  EXPECT_EQ(r.status, ChildResult::Status::Exited);
  EXPECT_NE(r.exit_code, 0);
  // The CUDA executor's words when it is built (cudaGetDeviceCount's), the build's otherwise.
  EXPECT_TRUE(r.err.find("no CUDA device: cudaGetDeviceCount says") != std::string::npos ||
              r.err.find("built without the CUDA executor") != std::string::npos)
      << r.err;
}

TEST(BeforeAfterCli, MissingPlanFileIsNamed) {
  auto r = fxc({"profile", kCnn, "--plan", "/nonexistent/plan.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("/nonexistent/plan.json"), std::string::npos) << r.err;
}

// In process: the per-group check catches a wrong kernel whichever group it is, and the
// reported errors are the measured ones.
TEST(BeforeAfter, WrongKernelIsExcludedAndItsErrorReported) {
  LoadedModel m = load_onnx(kCnn);
  FusionPlan plan(analyze_fusion(m.graph, preset_nvidia_h100(), {}), kCnn);
  plan.accept_all_above(0.3);
  auto accepted = plan.accepted();
  ASSERT_GE(accepted.size(), 2u);
  BeforeAfterOptions o;
  o.profile.runs = 2;
  o.profile.warmup = 1;
  o.profile.threads = 2;
  o.fault = FaultSpec{accepted[1]->id, FaultSpec::Mode::Wrong};
  std::vector<std::string> checked;
  o.on_check = [&](const std::string& id, bool done) {
    if (done) checked.push_back(id);
  };
  BeforeAfterResult r = run_before_after(m.graph, accepted, o);
  EXPECT_TRUE(r.outputs.match) << r.outputs.where;
  ASSERT_EQ(r.groups.size(), accepted.size());
  EXPECT_EQ(r.groups[1].status, "excluded");
  EXPECT_NEAR(r.groups[1].max_abs_error, 1.0, 1e-3);  // the hook adds 1
  EXPECT_NE(r.groups[1].reason.find("outputs differ"), std::string::npos);
  EXPECT_EQ(r.groups[0].status, "fused");
  EXPECT_LT(r.groups[0].max_abs_error, 1e-3);
  EXPECT_EQ(r.groups[0].estimate_profile, "nvidia-h100");
  EXPECT_EQ(checked.size(), accepted.size());
}

TEST(BeforeAfter, CallerExcludedGroupIsNotRunAndKeepsItsReason) {
  LoadedModel m = load_onnx(kCnn);
  FusionPlan plan(analyze_fusion(m.graph, preset_nvidia_h100(), {}), kCnn);
  plan.accept_all_above(0.3);
  auto accepted = plan.accepted();
  ASSERT_FALSE(accepted.empty());
  BeforeAfterOptions o;
  o.profile.runs = 1;
  o.profile.warmup = 0;
  o.excluded[accepted[0]->id] = "crashed earlier";
  o.fault = FaultSpec{accepted[0]->id, FaultSpec::Mode::Crash};  // would kill us if run
  BeforeAfterResult r = run_before_after(m.graph, accepted, o);
  EXPECT_EQ(r.groups[0].status, "excluded");
  EXPECT_EQ(r.groups[0].reason, "crashed earlier");
  EXPECT_TRUE(std::isnan(r.groups[0].measured_saved_us));
  EXPECT_TRUE(r.outputs.match);
}

TEST(BeforeAfterChild, GroupThatDiedIsTheLastCheckThatNeverEnded) {
  std::string err = check_marker("a", false) + "\n" + check_marker("a", true) + "\nnoise\n" +
                    check_marker("b", false) + "\n";
  EXPECT_EQ(group_that_died(err), "b");
  EXPECT_EQ(group_that_died(err + check_marker("b", true) + "\n"), "");
  EXPECT_EQ(group_that_died(""), "");
}

}  // namespace
}  // namespace fx
