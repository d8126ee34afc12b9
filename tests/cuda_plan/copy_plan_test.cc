// SPDX-License-Identifier: Apache-2.0
// The strided copies and the gather of the data-movement ops, run by the device
// kernel's host twin, against the CPU runtime's results of the same nodes.

#include "cuda_plan/copy_plan.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cuda_plan_test_util.h"
#include "profile/profiler.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

// Runs `g` on the CPU runtime; returns its inputs and outputs.
ProfileResult on_cpu(const Graph& g) {
  ProfileOptions o;
  o.runs = 1;
  o.warmup = 0;
  o.threads = 1;
  return Profiler(o).profile(g);
}

// Each output of single-node graph `g` rebuilt from the node's copy plan.
void expect_copies_match(const Graph& g, const std::string& node) {
  const ProfileResult r = on_cpu(g);
  const NodeId id = g.find_node(node);
  const auto copies = copy_plan(g, id);
  ASSERT_FALSE(copies.empty());
  for (std::size_t k = 0; k < g.outputs().size(); ++k) {
    const ValueId out = g.outputs()[k];
    std::vector<unsigned char> buf(r.outputs[k].byte_size(), 0xAB);
    for (const auto& c : copies) {
      if (c.dst != out) continue;
      const Tensor& src = r.inputs.at(g.value(c.src).name);
      run_strided_copy_host(c, src.raw(), buf.data());
    }
    EXPECT_EQ(std::memcmp(buf.data(), r.outputs[k].raw(), buf.size()), 0)
        << node << " output " << k << " differs from the CPU runtime";
  }
}

TEST(CopyPlan, TransposeMatchesTheRuntime) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 4, 5});
  b.output(b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{2, 0, 3, 1}}}, "t",
                Shape::of({4, 2, 5, 3})));
  expect_copies_match(b.build(), "t");
}

TEST(CopyPlan, SliceWithNegativeStepMatchesTheRuntime) {
  GraphBuilder b;
  auto x = b.input("x", {6, 10});
  auto starts = b.constant("s", TensorData::from_int64s({2}, {1, -1}));
  auto ends = b.constant("e", TensorData::from_int64s({2}, {5, 0}));
  auto axes = b.constant("a", TensorData::from_int64s({2}, {0, 1}));
  auto steps = b.constant("st", TensorData::from_int64s({2}, {2, -3}));
  b.output(b.op("Slice", {x, starts, ends, axes, steps}, {}, "slice", Shape::of({2, 3})));
  const Graph g = b.build();
  const auto c = copy_plan(g, g.find_node("slice"));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c[0].src_offset, 1 * 10 + 9);
  EXPECT_EQ(c[0].src_strides, (std::vector<int64_t>{20, -3}));
  expect_copies_match(g, "slice");
}

TEST(CopyPlan, ConcatSplitAndExpandMatchTheRuntime) {
  {
    GraphBuilder b;
    auto x = b.input("x", {2, 3, 4});
    auto y = b.input("y", {2, 5, 4});
    b.output(b.op("Concat", {x, y}, {{"axis", int64_t{1}}}, "cat", Shape::of({2, 8, 4})));
    expect_copies_match(b.build(), "cat");
  }
  {
    GraphBuilder b;
    auto x = b.input("x", {2, 7, 4});
    auto sizes = b.constant("sizes", TensorData::from_int64s({2}, {3, 4}));
    auto outs = b.op_multi("Split", {x, sizes}, 2, {{"axis", int64_t{1}}}, "split");
    Graph g = b.build();
    g.value(outs[0]).shape = Shape::of({2, 3, 4});
    g.value(outs[1]).shape = Shape::of({2, 4, 4});
    for (auto& o : outs) g.value(o).dtype = DType::Float32;
    g.add_output(outs[0]);
    g.add_output(outs[1]);
    expect_copies_match(g, "split");
  }
  {
    GraphBuilder b;
    auto x = b.input("x", {3, 1});
    auto shape = b.constant("shape", TensorData::from_int64s({3}, {2, 3, 4}));
    b.output(b.op("Expand", {x, shape}, {}, "expand", Shape::of({2, 3, 4})));
    expect_copies_match(b.build(), "expand");
  }
}

TEST(CopyPlan, GatherMatchesTheRuntime) {
  GraphBuilder b;
  auto table = b.input("table", {10, 6});
  auto idx = b.constant("idx", TensorData::from_int64s({2, 3}, {0, 9, -1, 4, 4, 2}));
  b.output(b.op("Gather", {table, idx}, {{"axis", int64_t{0}}}, "gather", Shape::of({2, 3, 6})));
  const Graph g = b.build();
  const ProfileResult r = on_cpu(g);
  const GatherCopy c = gather_plan(g, g.find_node("gather"));
  EXPECT_EQ(c.outer, 1);
  EXPECT_EQ(c.axis_len, 10);
  EXPECT_EQ(c.count, 6);
  EXPECT_EQ(c.inner, 6);
  std::vector<float> out(36, -1.f);
  const Tensor ids = Tensor::from_data(g.value(idx).data);
  run_gather_host(c, r.inputs.at("table").raw(), ids.raw(), out.data());
  EXPECT_EQ(std::memcmp(out.data(), r.outputs[0].raw(), out.size() * 4), 0);
}

TEST(CopyPlan, BroadcastComparisonMatchesTheRuntime) {
  GraphBuilder b;
  auto q = b.input("q", {4, 1}, DType::Int64);
  auto k = b.input("k", {1, 5}, DType::Int64);
  b.output(b.op("LessOrEqual", {k, q}, {}, "le", Shape::of({4, 5}), DType::Bool));
  const Graph g = b.build();
  const ProfileResult r = on_cpu(g);
  const CompareOp c = compare_plan(g, g.find_node("le"));
  EXPECT_EQ(c.kind, CompareOp::LessOrEqual);
  EXPECT_EQ(c.a_strides, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(c.b_strides, (std::vector<int64_t>{1, 0}));
  std::vector<unsigned char> out(20, 7);
  run_compare_host(c, r.inputs.at("k").raw(), r.inputs.at("q").raw(), out.data());
  EXPECT_EQ(std::memcmp(out.data(), r.outputs[0].raw(), out.size()), 0);
}

TEST(CopyPlan, RunTimeOperandsAreAnErrorNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", {6, 10});
  auto starts = b.input("starts", {1}, DType::Int64);
  auto ends = b.constant("e", TensorData::from_int64s({1}, {4}));
  b.output(b.op("Slice", {x, starts, ends}, {}, "dyn_slice", Shape::of({3, 10})));
  const Graph g = b.build();
  try {
    copy_plan(g, g.find_node("dyn_slice"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dyn_slice"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("computed at run time"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fx::cuda
