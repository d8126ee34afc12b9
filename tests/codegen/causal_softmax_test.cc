// SPDX-License-Identifier: Apache-2.0
// Where(mask, scores, fill) -> Softmax in one row kernel, the causal attention of
// GPT-2's export: the bool mask [S, S] (LessOrEqual of the positions, computed in the
// graph) broadcast over batch and heads and read as bytes in the Softmax's first pass.
// Checked against the unfused runtime on 1-3 threads.

#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

struct Causal {
  Graph g;
  std::map<std::string, Tensor> inputs;
};

// scores [B, H, S, S] / 8 -> Where(LessOrEqual(cols [1, S], rows [S, 1]), ., fill)
// -> Softmax. `fill_first`: Where(not-mask, fill, scores) instead (operands swapped).
Causal causal_graph(int64_t b, int64_t h, int64_t s, float fill, bool fill_first = false) {
  GraphBuilder gb;
  auto x = gb.input("scores", {b, h, s, s});
  auto cols = gb.input("cols", {1, s}, DType::Int64);
  auto rows = gb.input("rows", {s, 1}, DType::Int64);
  auto scale = gb.constant("scale", TensorData::from_floats({}, {8.f}));
  auto f = gb.constant("fill", TensorData::from_floats({}, {fill}));
  auto sc = gb.op("Div", {x, scale}, {}, "att_div");
  ValueId m, w;
  if (fill_first) {
    m = gb.op("Greater", {cols, rows}, {}, "att_mask", Shape::of({s, s}), DType::Bool);
    w = gb.op("Where", {m, f, sc}, {}, "att_where", Shape::of({b, h, s, s}), DType::Float32);
  } else {
    m = gb.op("LessOrEqual", {cols, rows}, {}, "att_mask", Shape::of({s, s}), DType::Bool);
    w = gb.op("Where", {m, sc, f}, {}, "att_where", Shape::of({b, h, s, s}), DType::Float32);
  }
  gb.output(gb.op("Softmax", {w}, {{"axis", int64_t{-1}}}, "att_softmax"));
  Causal c{gb.build(), {}};
  std::vector<int64_t> pos(static_cast<std::size_t>(s));
  for (int64_t i = 0; i < s; ++i) pos[static_cast<std::size_t>(i)] = i;
  c.inputs["scores"] = testing::random_tensor({b, h, s, s}, 3);
  c.inputs["cols"] = Tensor::from_int64s({1, s}, pos);
  c.inputs["rows"] = Tensor::from_int64s({s, 1}, pos);
  return c;
}

FusedProgram build(const Graph& g, const std::vector<std::string>& nodes) {
  std::vector<FusionGroup> groups{testing::make_group("fg-causal", nodes)};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("causal_softmax");
  opt.stem = "causal_softmax_test";
  return build_fused_program(g, testing::ptrs(groups), opt);
}

TEST(CausalSoftmax, MaskedRowKernelMatchesTheRuntime) {
  // Rows of 1 (a single open position), 17 (vector tail) and 128 (GPT-2's, at seq 128).
  for (int64_t s : {1, 17, 128}) {
    SCOPED_TRACE("seq " + std::to_string(s));
    Causal c = causal_graph(2, 3, s, -1e4f);
    FusedProgram p = build(c.g, {"att_div", "att_where", "att_softmax"});
    ASSERT_TRUE(p.note.empty()) << p.note;
    ASSERT_EQ(p.groups.at(0).outcome, GroupOutcome::Compiled) << p.groups[0].detail;
    testing::expect_steps_match_unfused(c.g, p.steps, c.inputs);
    // Masked positions get exp(-1e4 - max), 0 but for the polynomial exp's clamp at
    // -87.3 (1e-38): row i holds i + 1 probabilities.
    auto y = Executor(c.g, p.steps).run(c.inputs).at(0).to_floats();
    const auto S = static_cast<std::size_t>(s);
    for (std::size_t r = 0; r < y.size() / S; ++r)
      for (std::size_t j = 0; j < S; ++j) {
        if (j > r % S)
          EXPECT_LT(y[r * S + j], 1e-37f) << "row " << r << " col " << j;
        else
          EXPECT_GT(y[r * S + j], 1e-30f) << "row " << r << " col " << j;
      }
  }
}

// BERT's padding mask: (1 - mask) * -1e4 is computed once, [B, 1, 1, S], and added to the
// scores of every layer. A group that takes the mask's arithmetic in with the first
// layer's Add+Softmax has the mask as an output read outside the group: the row kernel
// would write it over the whole [B, H, S, S] space, so the group must not be compiled
// that way, and the program must still match the runtime.
TEST(CausalSoftmax, MaskReadOutsideTheGroupIsNotWrittenAtTheRowShape) {
  const int64_t b = 1, h = 2, s = 16;
  GraphBuilder gb;
  auto x1 = gb.input("scores1", {b, h, s, s});
  auto x2 = gb.input("scores2", {b, h, s, s});
  auto m = gb.input("mask", {b, 1, 1, s});
  auto one = gb.constant("one", TensorData::from_floats({}, {1.f}));
  auto big = gb.constant("big", TensorData::from_floats({}, {-1e4f}));
  auto inv = gb.op("Sub", {one, m}, {}, "mask_sub", Shape::of({b, 1, 1, s}), DType::Float32);
  auto add = gb.op("Mul", {inv, big}, {}, "mask_mul", Shape::of({b, 1, 1, s}), DType::Float32);
  auto a1 = gb.op("Add", {x1, add}, {}, "l0_add", Shape::of({b, h, s, s}), DType::Float32);
  gb.output(gb.op("Softmax", {a1}, {{"axis", int64_t{-1}}}, "l0_softmax"));
  auto a2 = gb.op("Add", {x2, add}, {}, "l1_add", Shape::of({b, h, s, s}), DType::Float32);
  gb.output(gb.op("Softmax", {a2}, {{"axis", int64_t{-1}}}, "l1_softmax"));
  Graph g = gb.build();
  std::map<std::string, Tensor> inputs{{"scores1", testing::random_tensor({b, h, s, s}, 5)},
                                       {"scores2", testing::random_tensor({b, h, s, s}, 6)}};
  std::vector<float> mask(static_cast<std::size_t>(s), 1.f);
  mask.back() = 0.f;  // one padded position
  inputs["mask"] = Tensor::from_floats({b, 1, 1, s}, mask);
  FusedProgram p = build(g, {"mask_sub", "mask_mul", "l0_add", "l0_softmax"});
  ASSERT_FALSE(p.groups.empty());
  // The whole group is not one row kernel (its parts may be, as extra groups "<id>.N").
  EXPECT_NE(p.groups[0].outcome, GroupOutcome::Compiled) << p.groups[0].detail;
  testing::expect_steps_match_unfused(g, p.steps, inputs);
}

TEST(CausalSoftmax, LargeTensorsSplitBetweenOpenMPThreadsMatchTheRuntime) {
  // >= 16 MiB: the compiled function's own OpenMP threads each start mid-tensor (the
  // offsets from a division, then the odometer over batch, heads and rows) and the
  // output leaves through streaming stores.
  Causal c = causal_graph(2, 13, 401, -1e4f);
  FusedProgram p = build(c.g, {"att_div", "att_where", "att_softmax"});
  ASSERT_EQ(p.groups.at(0).outcome, GroupOutcome::Compiled) << p.groups[0].detail;
  testing::expect_steps_match_unfused(c.g, p.steps, c.inputs);
  const std::string src = generate_group_source(
      c.g, testing::make_group("fg-causal", {"att_div", "att_where", "att_softmax"}));
  EXPECT_NE(src.find("step the odometer"), std::string::npos) << src;
}

TEST(CausalSoftmax, FillFirstAndInfiniteFillMatchTheRuntime) {
  Causal c = causal_graph(1, 2, 33, -INFINITY, /*fill_first=*/true);
  FusedProgram p = build(c.g, {"att_where", "att_softmax"});
  ASSERT_EQ(p.groups.at(0).outcome, GroupOutcome::Compiled) << p.groups[0].detail;
  testing::expect_steps_match_unfused(c.g, p.steps, c.inputs);
}

TEST(CausalSoftmax, MaskReadAsBytesInTheMaxPass) {
  Causal c = causal_graph(2, 12, 128, -1e4f);
  const std::string src =
      generate_group_source(c.g, testing::make_group("fg-causal", {"att_where", "att_softmax"}));
  EXPECT_NE(src.find("const unsigned char* __restrict p0 = (const unsigned char*)in[0]"),
            std::string::npos)
      << src;
  // The mask [S, S] is broadcast over batch and heads.
  EXPECT_NE(src.find("bc0[4] = {1, 1, 0, 0}"), std::string::npos) << src;
  EXPECT_NE(src.find("? "), std::string::npos) << src;
}

TEST(CausalSoftmax, TheMasksComparisonRunsFirstWhenGrouped) {
  // The analysis groups LessOrEqual (int64 in, bool out) with the scale, Where and
  // Softmax: the comparison runs through its runtime kernel inside the group's step,
  // the rest is one generated row kernel.
  Causal c = causal_graph(2, 3, 40, -1e4f);
  FusedProgram p = build(c.g, {"att_div", "att_mask", "att_where", "att_softmax"});
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].outcome, GroupOutcome::Compiled) << p.groups[0].detail;
  EXPECT_NE(p.groups[0].detail.find("mask"), std::string::npos) << p.groups[0].detail;
  testing::expect_steps_match_unfused(c.g, p.steps, c.inputs);
  const std::string src = generate_group_source(
      c.g, testing::make_group("fg-causal", {"att_div", "att_mask", "att_where", "att_softmax"}));
  EXPECT_NE(src.find("// Mask att_mask (LessOrEqual) runs through the runtime kernel first"),
            std::string::npos)
      << src;
}

}  // namespace
}  // namespace fx
