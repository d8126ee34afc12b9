#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

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

TEST(MemoryPlan, ChainReusesTwoSlots) {
  Graph g = relu_chain(6);
  Executor ex(g, ExecutorOptions{1});
  // Each step needs its input and output alive at once: two slots ping-pong.
  EXPECT_EQ(ex.slot_count(), 2);
  auto out = ex.run({{"x", Tensor(DType::Float32, {1, 1024})}});
  EXPECT_EQ(ex.total_activation_bytes(), 6 * 4096);
  EXPECT_LT(ex.peak_activation_bytes(), ex.total_activation_bytes());
  EXPECT_GE(ex.peak_activation_bytes(), 2 * 4096);
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

TEST(MemoryPlan, EstimatesFromStaticShapesBeforeTheFirstRun) {
  Graph g = relu_chain(4);
  Executor ex(g, ExecutorOptions{1});
  EXPECT_EQ(ex.peak_activation_bytes(), 2 * 4096);
}

}  // namespace
}  // namespace fx
