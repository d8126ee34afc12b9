// SPDX-License-Identifier: Apache-2.0
// The autotune cache: group keys follow structure and shapes (not node names), the
// file round-trips, a bad file is an error naming it, FX_AUTOTUNE_CACHE=off turns it
// off, the default plan loses exactly the groups measured slower fused, and "slower"
// means beyond the measurements' own noise.

#include "profile/autotune_cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ir/graph_builder.h"
#include "util/build_id.h"
#include "util/error.h"
#include "util/version.h"

namespace fx {
namespace {

// x -> Relu -> Neg -> out, with names prefixed by `prefix`; the group is both nodes.
struct Chain {
  Graph graph;
  FusionGroup group;
};
Chain chain(const std::string& prefix, const std::vector<int64_t>& dims, const std::string& id) {
  GraphBuilder b;
  const ValueId x = b.input(prefix + "x", dims);
  const ValueId r = b.op("Relu", {x}, {}, prefix + "relu");
  b.output(b.op("Neg", {r}, {}, prefix + "neg"));
  Chain c{b.build(), {}};
  c.group.id = id;
  c.group.pattern = "auto_vertical";
  c.group.nodes = {prefix + "relu", prefix + "neg"};
  c.group.ops = {"Relu", "Neg"};
  c.group.status = GroupStatus::Accepted;
  return c;
}

std::string temp_path(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("fx_autotune_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(AutotuneCache, KeysFollowStructureAndShapesNotNames) {
  const Chain a = chain("a_", {1, 64}, "fg-a"), b = chain("other_", {1, 64}, "fg-b");
  const Chain wide = chain("a_", {1, 128}, "fg-a");
  EXPECT_EQ(group_signature(a.graph, a.group, 2), group_signature(b.graph, b.group, 2));
  EXPECT_NE(group_signature(a.graph, a.group, 2), group_signature(wide.graph, wide.group, 2));
  EXPECT_NE(group_signature(a.graph, a.group, 2), group_signature(a.graph, a.group, 4));
  EXPECT_EQ(group_signature(a.graph, a.group, 2).rfind("auto_vertical:", 0), 0u);
}

TEST(AutotuneCache, RoundTripsAndAveragesMeasurements) {
  const std::string path = temp_path("round_trip/cache.json");  // folder made by save()
  std::filesystem::remove(path);
  AutotuneCache c = AutotuneCache::open(path);
  EXPECT_EQ(c.size(), 0u);
  c.record("auto_vertical:1", 10.0, 14.0, 1.0, "auto_vertical", "m1");
  c.record("auto_vertical:1", 12.0, 16.0, 0.5, "auto_vertical", "m2");
  c.record("conv_bias_act:2", 30.0, 20.0, 1.0, "conv_bias_act", "m1");
  c.save();
  const AutotuneCache back = AutotuneCache::open(path);
  ASSERT_EQ(back.size(), 2u);
  const AutotuneEntry* e = back.find("auto_vertical:1");
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->unfused_us, 11.0);
  EXPECT_DOUBLE_EQ(e->fused_us, 15.0);
  EXPECT_EQ(e->measurements, 2);
  EXPECT_EQ(e->model, "m2");
  EXPECT_DOUBLE_EQ(e->noise_us, 0.75);
  EXPECT_DOUBLE_EQ(e->margin_us(), 0.75);  // the same difference both times: no spread
  EXPECT_TRUE(e->fused_slower());
  EXPECT_FALSE(back.find("conv_bias_act:2")->fused_slower());
  EXPECT_EQ(back.find("missing"), nullptr);
}

TEST(AutotuneCache, ABadFileIsAnErrorNamingIt) {
  const std::string path = temp_path("bad.json");
  std::ofstream(path) << "{\"schema\": \"something else\", \"groups\": {}}";
  try {
    AutotuneCache::open(path);
    FAIL() << "no error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_NE(std::string(e.what()).find("not an autotune cache"), std::string::npos) << e.what();
  }
  std::ofstream(path) << "not json";
  EXPECT_THROW(AutotuneCache::open(path), FileError);
}

TEST(AutotuneCache, OffSwitchAndPathPerCpuAndVersion) {
  ::setenv("FX_AUTOTUNE_CACHE", "off", 1);
  EXPECT_FALSE(AutotuneCache::enabled());
  ::setenv("FX_AUTOTUNE_CACHE", "0", 1);
  EXPECT_FALSE(AutotuneCache::enabled());
  ::unsetenv("FX_AUTOTUNE_CACHE");
  EXPECT_TRUE(AutotuneCache::enabled());
  const std::string p = AutotuneCache::default_path("AMD EPYC 9R14 96-Core Processor");
  EXPECT_NE(p.find("/autotune/AMD_EPYC_9R14_96-Core_Processor-fxc-"), std::string::npos) << p;
  EXPECT_NE(p, AutotuneCache::default_path("Intel(R) Xeon(R) Platinum 8488C"));
  // Keyed by the build too: another build of the same version does not read this file.
  const std::string id = build_id();
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_NE(p.find(std::string("-fxc-") + kVersion + "-" + id + ".json"), std::string::npos) << p;
}

TEST(AutotuneCache, TheDefaultPlanLosesGroupsMeasuredSlowerOnThisCpu) {
  const Chain slow = chain("s_", {1, 64}, "fg-slow");
  AnalysisResult a;
  a.device = "test-device";
  a.groups.push_back(slow.group);
  FusionGroup fast = slow.group;  // same graph, another group: one node, its own key
  fast.id = "fg-fast";
  fast.nodes = {"s_relu"};
  fast.ops = {"Relu"};
  a.groups.push_back(fast);
  FusionGroup unmeasured = fast;
  unmeasured.id = "fg-unmeasured";
  unmeasured.nodes = {"s_neg"};
  unmeasured.ops = {"Neg"};
  a.groups.push_back(unmeasured);
  FusionPlan plan(a, "m.onnx");

  AutotuneCache c = AutotuneCache::open(temp_path("never_written.json"));
  c.record(group_signature(slow.graph, slow.group, 2), 8.0, 9.5, 0.5, "auto_vertical", "m");
  c.record(group_signature(slow.graph, fast, 2), 8.0, 5.0, 0.5, "auto_vertical", "m");
  // Measured at 4 threads only: says nothing about 2.
  c.record(group_signature(slow.graph, unmeasured, 4), 1.0, 9.0, 0.5, "auto_vertical", "m");

  const AutotuneVerdict v = reject_autotuned_slower(plan, slow.graph, 2, c);
  EXPECT_EQ(v.consulted, 2);
  EXPECT_EQ(v.rejected, 1);
  EXPECT_EQ(plan.find("fg-slow")->status, GroupStatus::Rejected);
  EXPECT_NE(plan.find("fg-slow")->reason.find("measured slower on this CPU (autotune cache)"),
            std::string::npos)
      << plan.find("fg-slow")->reason;
  EXPECT_EQ(plan.find("fg-fast")->status, GroupStatus::Accepted);
  EXPECT_EQ(plan.find("fg-unmeasured")->status, GroupStatus::Accepted);
}

TEST(AutotuneCache, SlowerOnlyBeyondTheMeasuredNoise) {
  AutotuneCache c = AutotuneCache::open(temp_path("never_written_noise.json"));
  // 1 us slower, but the runs spread by 3 us: a tie, not "slower".
  c.record("tie", 10.0, 11.0, 3.0, "p", "m");
  EXPECT_FALSE(c.find("tie")->fused_slower());
  // 1 us slower with 0.2 us of noise: slower.
  c.record("real", 10.0, 11.0, 0.2, "p", "m");
  EXPECT_TRUE(c.find("real")->fused_slower());
  // No quartiles and one measurement: the noise is unknown, so it cannot tell.
  c.record("unknown", 10.0, 20.0, NAN, "p", "m");
  EXPECT_TRUE(std::isnan(c.find("unknown")->margin_us()));
  EXPECT_FALSE(c.find("unknown")->fused_slower());
  // Measurements that disagree (+4, -2, +4 us): their spread (sd about 3.5) exceeds
  // the mean difference (+2), though each run alone was quiet.
  c.record("drifting", 10.0, 14.0, 0.1, "p", "m");
  c.record("drifting", 10.0, 8.0, 0.1, "p", "m");
  c.record("drifting", 10.0, 14.0, 0.1, "p", "m");
  const AutotuneEntry* d = c.find("drifting");
  EXPECT_NEAR(d->fused_us - d->unfused_us, 2.0, 1e-12);
  EXPECT_NEAR(d->margin_us(), std::sqrt(12.0), 1e-9);
  EXPECT_FALSE(d->fused_slower());
  // Without any noise recorded, the across-measurement spread alone decides.
  c.record("steady", 10.0, 13.0, NAN, "p", "m");
  c.record("steady", 10.0, 13.2, NAN, "p", "m");
  EXPECT_TRUE(c.find("steady")->fused_slower());
}

TEST(AutotuneCache, NoiseOfAGroupIsItsKernelsQuartileHalfWidths) {
  BeforeAfterDocument d;
  auto row = [](std::vector<std::string> nodes, double q1, double med, double q3) {
    KernelRow k;
    k.nodes = std::move(nodes);
    k.q1_us = q1, k.median_us = med, k.q3_us = q3;
    return k;
  };
  d.before.kernels = {row({"a"}, 9, 10, 12), row({"b"}, 4, 5, 5.5), row({"c"}, 0, 1, 100)};
  d.after.kernels = {row({"a", "b"}, 13, 14, 20), row({"c"}, 0, 1, 100)};
  // Before: (12 - 10) + (5.5 - 5); after: 14 - 13.
  EXPECT_DOUBLE_EQ(measured_noise_us(d, {"a", "b"}), 3.5);
  d.before.kernels[1].q1_us = NAN;  // no quartiles: unknown
  EXPECT_TRUE(std::isnan(measured_noise_us(d, {"a", "b"})));
  EXPECT_TRUE(std::isnan(measured_noise_us(d, {"zzz"})));
}

TEST(AutotuneCache, NoiseRoundTripsAndOldFilesCannotTell) {
  const std::string path = temp_path("noise_round_trip.json");
  {
    std::ofstream f(path);
    f << R"({"schema": "fusion-explorer-autotune", "groups": {)"
      << R"("old": {"unfused_us": 10, "fused_us": 30, "measurements": 1}}})";
  }
  AutotuneCache c = AutotuneCache::open(path);
  ASSERT_NE(c.find("old"), nullptr);
  EXPECT_FALSE(c.find("old")->fused_slower());  // written before noise was kept
  // Measured again without quartiles: two measurements, but the first one's place in
  // the spread is unknown, so the spread is too (not zero).
  c.record("old", 10.0, 30.0, NAN, "p", "m");
  EXPECT_TRUE(std::isnan(c.find("old")->margin_us()));
  EXPECT_FALSE(c.find("old")->fused_slower());
  c.record("new", 10.0, 12.0, 0.5, "p", "m");
  c.record("new", 10.0, 12.5, 0.7, "p", "m");
  c.save();
  const AutotuneCache back = AutotuneCache::open(path);
  const AutotuneEntry* e = back.find("new");
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->noise_us, 0.6);
  EXPECT_EQ(e->noise_measurements, 2);
  EXPECT_NEAR(e->diff_m2, 0.125, 1e-12);
  EXPECT_TRUE(e->fused_slower());
}

}  // namespace
}  // namespace fx
