// SPDX-License-Identifier: Apache-2.0
#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ir/graph_builder.h"
#include "runtime/executor.h"

namespace fx {
namespace {

// x -> Relu -> Relu -> ... (n times) -> y, all [1, 1024] float.
Graph relu_chain(int n) {
  GraphBuilder b;
  ValueId v = b.input("x", {1, 1024});
  for (int i = 0; i < n; ++i) v = b.op("Relu", {v});
  b.output(v);
  return b.build();
}

// x -> Add(., one) -> Add(., one) -> ... (n times): Add does not write over its input.
Graph add_chain(int n) {
  GraphBuilder b;
  ValueId v = b.input("x", {1, 1024});
  ValueId one = b.constant("one", TensorData::from_floats({1}, {1.0f}));
  for (int i = 0; i < n; ++i) v = b.op("Add", {v, one});
  b.output(v);
  return b.build();
}

TEST(MemoryPlan, ChainReusesTwoSlots) {
  Graph g = add_chain(6);
  Executor ex(g, ExecutorOptions{1});
  // Each step needs its input and output alive at once: two slots ping-pong.
  EXPECT_EQ(ex.slot_count(), 2);
  auto out = ex.run({{"x", Tensor::from_floats({1, 1024}, std::vector<float>(1024, 0.5f))}});
  EXPECT_EQ(out[0].to_floats(), std::vector<float>(1024, 6.5f));
  EXPECT_EQ(ex.total_activation_bytes(), 6 * 4096);
  EXPECT_LT(ex.peak_activation_bytes(), ex.total_activation_bytes());
  EXPECT_GE(ex.peak_activation_bytes(), 2 * 4096);
}

TEST(MemoryPlan, UnaryOpsWriteOverAnInputThatDiesThere) {
  // Relu after Relu: each output takes its input's slot (the first reads the graph
  // input, which is the caller's memory and gets a slot of its own).
  Graph g = relu_chain(6);
  Executor ex(g, ExecutorOptions{1});
  EXPECT_EQ(ex.slot_count(), 1);
  std::vector<float> x(1024);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  auto out = ex.run({{"x", Tensor::from_floats({1, 1024}, x)}});
  auto y = out[0].to_floats();
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i], 0.0f)) << i;
  EXPECT_EQ(ex.peak_activation_bytes(), 4096);
}

TEST(MemoryPlan, UnaryOpsKeepAnInputThatIsReadLater) {
  // a = Relu(x); b = Sigmoid(a); c = Add(a, b): b must not overwrite a.
  GraphBuilder bld;
  ValueId x = bld.input("x", {4});
  ValueId a = bld.op("Relu", {x});
  ValueId b = bld.op("Sigmoid", {a});
  ValueId c = bld.op("Add", {a, b});
  ValueId d = bld.op("Clip", {c});  // c dies here: d takes its slot
  bld.output(d);
  Graph g = bld.build();
  Executor ex(g, ExecutorOptions{1});
  EXPECT_NE(ex.slot_of(a), ex.slot_of(b));
  EXPECT_EQ(ex.slot_of(c), ex.slot_of(d));
  auto out = ex.run({{"x", Tensor::from_floats({4}, {-1, 0, 1, 2})}});
  auto y = out[0].to_floats();
  const float in[4] = {-1, 0, 1, 2};
  for (int i = 0; i < 4; ++i) {
    float r = std::max(in[i], 0.0f);
    EXPECT_NEAR(y[static_cast<std::size_t>(i)], r + 1.0f / (1.0f + std::exp(-r)), 1e-6f) << i;
  }
}

TEST(MemoryPlan, OutputTakesTheSlotOfTheInputTheStepNames) {
  // a = Relu(x); b = Relu(a); c = Add(b, a) written over input 1 (a fused Conv's
  // residual): a dies at c, so c takes a's slot; b, read by no later step either,
  // keeps its own (only the named input is handed over).
  GraphBuilder bld;
  ValueId x = bld.input("x", {4});
  ValueId a = bld.op("Relu", {x});
  ValueId b = bld.op("Relu", {a});
  ValueId c = bld.op("Add", {b, a});
  bld.output(c);
  Graph g = bld.build();
  std::vector<PlanStep> steps{{{x}, {a}}, {{a}, {b}}, {{b, a}, {c}, false, true, 1}};
  MemoryPlan p = MemoryPlan::build(g, steps);
  EXPECT_EQ(p.slot_of_value[c], p.slot_of_value[a]);
  EXPECT_NE(p.slot_of_value[c], p.slot_of_value[b]);
  // The same input read twice by the step is not handed over.
  std::vector<PlanStep> twice{{{x}, {a}}, {{a}, {b}}, {{a, a}, {c}, false, true, 1}};
  MemoryPlan q = MemoryPlan::build(g, twice);
  EXPECT_NE(q.slot_of_value[c], q.slot_of_value[a]);
}

TEST(MemoryPlan, ValuesAliveTogetherNeverShareASlot) {
  // a = Relu(x); b = Relu(a); c = Add(a, b): a is alive while b is written.
  GraphBuilder bld;
  ValueId x = bld.input("x", {4});
  ValueId a = bld.op("Relu", {x});
  ValueId b = bld.op("Relu", {a});
  ValueId c = bld.op("Add", {a, b});
  bld.output(c);
  Graph g = bld.build();
  Executor ex(g, ExecutorOptions{1});
  EXPECT_NE(ex.slot_of(a), ex.slot_of(b));
  EXPECT_NE(ex.slot_of(b), ex.slot_of(c));
  EXPECT_NE(ex.slot_of(a), ex.slot_of(c));
  EXPECT_EQ(ex.slot_of(x), -1);  // graph inputs are the caller's memory
}

TEST(MemoryPlan, ViewsExtendTheLifetimeOfTheirSource) {
  // r = Reshape(Relu(x)) is a view of Relu's output: that buffer must not be reused
  // by the next Relu while r is still read.
  GraphBuilder bld;
  ValueId x = bld.input("x", {2, 2});
  ValueId a = bld.op("Relu", {x});
  ValueId shape = bld.constant("shape", TensorData::from_int64s({1}, {4}));
  ValueId r = bld.op("Reshape", {a, shape});
  ValueId b = bld.op("Neg", {r});
  ValueId c = bld.op("Add", {r, b});
  bld.output(c);
  Graph g = bld.build();
  Executor ex(g, ExecutorOptions{1});
  EXPECT_EQ(ex.slot_of(r), -1);
  EXPECT_NE(ex.slot_of(a), ex.slot_of(b));
  auto out = ex.run({{"x", Tensor::from_floats({2, 2}, {1, -2, 3, 4})}});
  // c = relu(x) + (-relu(x)) = 0 everywhere only if r was not overwritten.
  EXPECT_EQ(out[0].to_floats(), (std::vector<float>{0, 0, 0, 0}));
}

TEST(MemoryPlan, NeverLargerThanPlacingTheLargestValuesFirst) {
  // A chain of 4, 1, 2, 4, 1 KiB-floats values, each read by the next step. In step
  // order, best fit grows the 1-unit slot to 4 units for the fourth value (8 units in
  // all); largest first fits them in 4 + 2 + 1.
  const std::vector<int64_t> units = {4, 1, 2, 4, 1};
  GraphBuilder b;
  std::vector<ValueId> v;
  for (std::size_t i = 0; i < units.size(); ++i)
    v.push_back(b.op("Relu", {b.input("x" + std::to_string(i), {units[i] * 1024})}));
  b.output(v.back());
  Graph g = b.build();
  std::vector<PlanStep> steps;
  for (std::size_t i = 0; i < v.size(); ++i)
    steps.push_back({i == 0 ? std::vector<ValueId>{} : std::vector<ValueId>{v[i - 1]}, {v[i]}});
  MemoryPlan p = MemoryPlan::build(g, steps);
  int64_t total = 0;
  for (int64_t bytes : p.slot_estimate) total += bytes;
  EXPECT_EQ(total, 7 * 4096);
  // Still a valid plan: values alive at the same step never share a slot, and each
  // value's slot holds it.
  for (std::size_t i = 0; i + 1 < v.size(); ++i)
    EXPECT_NE(p.slot_of_value[v[i]], p.slot_of_value[v[i + 1]]);
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_GE(p.slot_estimate[static_cast<std::size_t>(p.slot_of_value[v[i]])], units[i] * 4096);
}

// The chain above with one small value of no static size beside it (shape arithmetic an
// exporter left unfolded): the plan still places the largest values first, rather
// than falling back to step order for the whole graph.
TEST(MemoryPlan, AValueWithoutAStaticSizeDoesNotStopLargestFirst) {
  const std::vector<int64_t> units = {4, 1, 2, 4, 1};
  GraphBuilder b;
  std::vector<ValueId> v;
  for (std::size_t i = 0; i < units.size(); ++i)
    v.push_back(b.op("Relu", {b.input("x" + std::to_string(i), {units[i] * 1024})}));
  const ValueId unknown =
      b.op("Relu", {b.input("s", {8})}, {}, "shape_math", Shape({Dim::named("n")}));
  b.output(v.back());
  b.output(unknown);
  Graph g = b.build();
  ASSERT_FALSE(g.value(unknown).byte_size());
  std::vector<PlanStep> steps{{{}, {unknown}}};
  for (std::size_t i = 0; i < v.size(); ++i)
    steps.push_back({i == 0 ? std::vector<ValueId>{} : std::vector<ValueId>{v[i - 1]}, {v[i]}});
  MemoryPlan p = MemoryPlan::build(g, steps);
  int64_t total = 0;
  for (int64_t bytes : p.slot_estimate) total += bytes;
  EXPECT_EQ(total, 7 * 4096);  // step order: 8 units, as in the test above
  // The unknown value lives through every step (a graph output): a slot of its own.
  for (ValueId x : v) EXPECT_NE(p.slot_of_value[x], p.slot_of_value[unknown]);
}

// Fusion removes values, and the plan of the fused program can still come out larger:
// x -> A(4) -> B(1) -> C(2) -> D(4) -> E(1) needs 4 + 2 + 1 units unfused, but with B
// and C fused away the fused step reads A while it writes D (4 + 4). Unless the fused
// step may write over its input (an elementwise group whose output has its input's
// shape): then A's slot serves D and the fused program needs less.
TEST(MemoryPlan, FusedStepThatWritesOverItsInputIsNoLargerThanUnfused) {
  const std::vector<int64_t> units = {4, 1, 2, 4, 1};
  GraphBuilder b;
  std::vector<ValueId> v;
  for (std::size_t i = 0; i < units.size(); ++i)
    v.push_back(b.op("Relu", {b.input("x" + std::to_string(i), {units[i] * 1024})}));
  b.output(v.back());
  Graph g = b.build();
  auto total_of = [&](const std::vector<std::size_t>& kept, bool over_input) {
    std::vector<PlanStep> steps;
    for (std::size_t k = 0; k < kept.size(); ++k) {
      PlanStep st{k == 0 ? std::vector<ValueId>{} : std::vector<ValueId>{v[kept[k - 1]]},
                  {v[kept[k]]}};
      st.over_input = over_input && k > 0 && units[kept[k]] == units[kept[k - 1]];
      steps.push_back(st);
    }
    MemoryPlan p = MemoryPlan::build(g, steps);
    int64_t total = 0;
    for (int64_t bytes : p.slot_estimate) total += bytes;
    return total;
  };
  const int64_t unfused = total_of({0, 1, 2, 3, 4}, false);
  EXPECT_EQ(unfused, 7 * 4096);
  EXPECT_EQ(total_of({0, 3, 4}, false), 8 * 4096);  // A and D alive together
  EXPECT_EQ(total_of({0, 3, 4}, true), 5 * 4096);   // D written over A
  EXPECT_LE(total_of({0, 3, 4}, true), unfused);
}

// a(3) -> b(3) -> c(3); d(1) made beside c; e(4) = f(c, d), a graph output (units of
// 1 Ki floats). At most 8 units are alive at once (c, d and e at the last step). Step
// order puts e in a new slot (3 + 3 + 1 + 3 = 10) and so does largest first (e first,
// then a, b, c alternate in two slots of 3 and d needs a fourth); placing the widest
// step's values first (c, e, d) leaves a and b to share slots with them: 4 + 3 + 1.
TEST(MemoryPlan, PacksTheWidestStepFirstWhenThatTotalsLess) {
  const std::vector<int64_t> units = {3, 3, 3, 1, 4};
  GraphBuilder b;
  std::vector<ValueId> v;
  for (std::size_t i = 0; i < units.size(); ++i)
    v.push_back(b.op("Relu", {b.input("x" + std::to_string(i), {units[i] * 1024})}));
  b.output(v[4]);
  Graph g = b.build();
  const std::vector<PlanStep> steps = {
      {{}, {v[0]}}, {{v[0]}, {v[1]}}, {{v[1]}, {v[2]}}, {{}, {v[3]}}, {{v[2], v[3]}, {v[4]}}};
  MemoryPlan p = MemoryPlan::build(g, steps);
  int64_t total = 0;
  for (int64_t bytes : p.slot_estimate) total += bytes;
  EXPECT_EQ(total, 8 * 4096);
  // A valid plan: values alive at the same step never share a slot, each slot holds its
  // values.
  const std::vector<std::pair<int, int>> life = {{0, 1}, {1, 2}, {2, 4}, {3, 4}, {4, 5}};
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_GE(p.slot_estimate[static_cast<std::size_t>(p.slot_of_value[v[i]])], units[i] * 4096);
    for (std::size_t j = i + 1; j < v.size(); ++j)
      if (life[i].first <= life[j].second && life[j].first <= life[i].second)
        EXPECT_NE(p.slot_of_value[v[i]], p.slot_of_value[v[j]]) << i << " " << j;
  }
}

TEST(MemoryPlan, EstimatesFromStaticShapesBeforeTheFirstRun) {
  Graph g = add_chain(4);
  Executor ex(g, ExecutorOptions{1});
  EXPECT_EQ(ex.peak_activation_bytes(), 2 * 4096);
}

}  // namespace
}  // namespace fx
