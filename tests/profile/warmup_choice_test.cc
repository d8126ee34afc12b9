// SPDX-License-Identifier: Apache-2.0
// Benchmark-then-choose at warm-up (profile/warmup_choice.h): a fused kernel made slower
// on purpose (fault_injection.h's "slow": it runs right, then waits 5 ms) falls back to
// its members' unfused steps, the program's outputs stay the unfused ones, and a group
// with a verdict from elsewhere (the autotune cache) is not timed.

#include "profile/warmup_choice.h"

#include <gtest/gtest.h>

#include "codegen/codegen_test_util.h"
#include "ir/graph_builder.h"
#include "profile/fault_injection.h"

namespace fx {
namespace {

// x -> MatMul + bias + Relu (fg-a) -> MatMul + bias + Tanh (fg-b), both oneDNN matmuls
// with post-ops (no compiler needed).
struct TwoGroups {
  Graph g;
  FusedProgram p;
};

TwoGroups two_groups() {
  GraphBuilder b;
  const int64_t m = 32, k = 64, n = 64;
  auto x = b.input("x", {m, k});
  auto mm1 = b.op("MatMul", {x, testing::random_constant(b, "w1", {k, n}, 1)}, {}, "mm1",
                  Shape::of({m, n}));
  auto a1 = b.op("Add", {mm1, testing::random_constant(b, "b1", {n}, 2)}, {}, "add1");
  auto r1 = b.op("Relu", {a1}, {}, "relu1");
  auto mm2 = b.op("MatMul", {r1, testing::random_constant(b, "w2", {n, n}, 3)}, {}, "mm2",
                  Shape::of({m, n}));
  auto a2 = b.op("Add", {mm2, testing::random_constant(b, "b2", {n}, 4)}, {}, "add2");
  b.output(b.op("Tanh", {a2}, {}, "tanh2"));
  TwoGroups t{b.build(), {}};
  t.p = testing::post_op_program(t.g, {testing::make_group("fg-a", {"mm1", "add1", "relu1"}),
                                       testing::make_group("fg-b", {"mm2", "add2", "tanh2"})});
  return t;
}

// Makes group `id`'s fused kernel wait after running (in the group and in the steps).
void slow_down(FusedProgram& p, const std::string& id) {
  for (auto& gb : p.groups)
    if (gb.id == id) gb.step->kernel = broken_kernel(gb.step->kernel, FaultSpec::Mode::Slow);
  for (auto& s : p.steps)
    if (s.name == id) s.kernel = broken_kernel(s.kernel, FaultSpec::Mode::Slow);
}

bool has_step(const std::vector<Step>& steps, const std::string& name) {
  for (const auto& s : steps)
    if (s.name == name) return true;
  return false;
}

TEST(WarmupChoice, AFusedKernelMeasuredSlowerFallsBackToItsUnfusedSteps) {
  TwoGroups t = two_groups();
  ASSERT_TRUE(has_step(t.p.steps, "fg-a"));
  slow_down(t.p, "fg-a");
  const auto in = testing::seeded_inputs(t.g, 5);
  Executor unfused(t.g, ExecutorOptions{2});
  WarmupChoiceOptions o;
  o.rounds = 5;
  o.threads = 2;
  const WarmupChoice c = choose_faster_groups(t.g, t.p, unfused, in, o);
  EXPECT_EQ(c.timed, 2);
  EXPECT_EQ(c.decided, 0);
  bool a_fell = false;
  // (fg-b is small enough to measure either way: only fg-a's fate is certain.)
  for (const auto& f : c.fell_back) {
    if (f.id != "fg-a") continue;
    a_fell = true;
    EXPECT_GT(f.fused_us, f.unfused_us + 4000) << f.line();
    EXPECT_EQ(f.line().rfind("fell back at warm-up: fg-a", 0), 0u) << f.line();
  }
  ASSERT_TRUE(a_fell);
  const GroupBuild* a = t.p.find("fg-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->outcome, GroupOutcome::Excluded);
  EXPECT_NE(a->detail.find("measured slower fused at warm-up"), std::string::npos) << a->detail;
  // The rebuilt program runs fg-a's members unfused (the slow kernel is gone); its
  // outputs are the unfused ones.
  EXPECT_FALSE(has_step(t.p.steps, "fg-a"));
  EXPECT_TRUE(has_step(t.p.steps, "mm1"));
  EXPECT_TRUE(has_step(t.p.steps, "relu1"));
  testing::expect_steps_match_unfused(t.g, t.p.steps, in);
}

TEST(WarmupChoice, GroupsWithAVerdictAreNotTimed) {
  TwoGroups t = two_groups();
  slow_down(t.p, "fg-a");
  const auto in = testing::seeded_inputs(t.g, 6);
  Executor unfused(t.g, ExecutorOptions{2});
  WarmupChoiceOptions o;
  o.rounds = 4;
  o.threads = 2;
  o.decided = [](const GroupBuild& b) { return b.id == "fg-a"; };
  const WarmupChoice c = choose_faster_groups(t.g, t.p, unfused, in, o);
  EXPECT_EQ(c.decided, 1);
  EXPECT_EQ(c.timed, 1);
  for (const auto& f : c.fell_back) EXPECT_NE(f.id, "fg-a");
  EXPECT_TRUE(has_step(t.p.steps, "fg-a")) << "a group with a verdict keeps its fused kernel";
}

}  // namespace
}  // namespace fx
