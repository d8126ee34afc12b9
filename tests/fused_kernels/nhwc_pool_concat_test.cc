// SPDX-License-Identifier: Apache-2.0
// The layout plan through Inception- and DenseNet-shaped blocks: a zero Pad before an
// AveragePool folds into the pool (pool_pad_fold.h), the pool runs on NHWC
// (nhwc_max_pool.h) and the Concat joining the branches stays NHWC; a BatchNormalization
// after a Concat (pre-activation) runs on NHWC (nhwc_batch_norm.h), its Relu folded
// into the same pass, so the Concat and the Convs around it stay NHWC. Every fused
// program matches the unfused runtime; a Pad that cannot fold (read elsewhere, or into a
// pool that does not count its own pads) stays a step and the output still matches.

#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/conv_layout_plan.h"
#include "fused_kernels/nhwc_batch_norm.h"
#include "fused_kernels/nhwc_concat.h"
#include "fused_kernels/nhwc_max_pool.h"
#include "fused_kernels/pool_pad_fold.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::make_group;
using testing::random_floats;
using Ints = std::vector<int64_t>;

struct Builder {
  GraphBuilder b;
  int64_t n = 1;
  uint32_t seed = 1;
  Shape s4(int64_t c, int64_t h) const { return Shape::of({n, c, h, h}); }
  // Conv k x k (same padding) + Relu, named `name` and `name`_relu.
  ValueId conv(ValueId in, const std::string& name, int64_t cin, int64_t cout, int64_t k, int64_t h,
               bool relu = true) {
    auto w = b.constant(
        name + "_w",
        TensorData::from_floats({cout, cin, k, k}, random_floats(cout * cin * k * k, seed++)));
    auto bias =
        b.constant(name + "_b", TensorData::from_floats({cout}, random_floats(cout, seed++)));
    const int64_t p = k / 2;
    auto c = b.op("Conv", {in, w, bias}, {{"pads", Ints{p, p, p, p}}}, name, s4(cout, h));
    return relu ? b.op("Relu", {c}, {}, name + "_relu", s4(cout, h)) : c;
  }
  ValueId batch_norm(ValueId in, const std::string& name, int64_t c, int64_t h) {
    std::vector<ValueId> in_params{in};
    for (const char* p : {"scale", "bias", "mean", "var"}) {
      auto v =
          random_floats(static_cast<std::size_t>(c), seed++, std::string(p) == "var" ? 0.5f : -1,
                        std::string(p) == "var" ? 2.0f : 1);
      in_params.push_back(b.constant(name + "_" + p, TensorData::from_floats({c}, v)));
    }
    return b.op("BatchNormalization", in_params, {{"epsilon", 1e-3f}}, name, s4(c, h));
  }
};

const Step& step_named(const std::vector<Step>& steps, const std::string& name) {
  auto it = std::find_if(steps.begin(), steps.end(), [&](const Step& s) { return s.name == name; });
  EXPECT_NE(it, steps.end()) << name;
  return *it;
}

bool has_step_of(const std::vector<Step>& steps, const std::string& op_type) {
  return std::any_of(steps.begin(), steps.end(),
                     [&](const Step& s) { return s.op_type == op_type; });
}

void expect_matches_unfused(const Graph& g, const FusedProgram& p, int64_t n, int64_t c, int64_t h,
                            const std::string& what) {
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({n, c, h, h}, 7)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, what, 1e-3);
}

// An Inception block: stem 3x3 -> {1x1, Pad -> AveragePool -> 1x1} -> Concat -> 3x3
// -> GlobalAveragePool. `pad` is the Pad's spatial pads (each side); `pool_pads` and
// `count_pad` the pool's own (its window 3 + 2 pool_pads, so that both branches have the
// stem's size); with `tap` the Pad's output is a graph output too.
Graph inception_block(int64_t n, int64_t pad, int64_t pool_pads, bool count_pad, bool tap) {
  Builder m;
  m.n = n;
  const int64_t h = 9;
  auto x = m.b.input("x", {n, 8, h, h});
  auto stem = m.conv(x, "stem", 8, 16, 3, h);
  auto b1 = m.conv(stem, "b1", 16, 8, 1, h);
  auto pads = m.b.constant("pads", TensorData::from_int64s({8}, {0, 0, pad, pad, 0, 0, pad, pad}));
  auto padded = m.b.op("Pad", {stem, pads}, {}, "pad", m.s4(16, h + 2 * pad));
  if (tap) m.b.output(padded);
  const int64_t k = 3 + 2 * pool_pads, ph = h + 2 * pad + 2 * pool_pads - k + 1;
  auto pool = m.b.op("AveragePool", {padded},
                     {{"kernel_shape", Ints{k, k}},
                      {"pads", Ints{pool_pads, pool_pads, pool_pads, pool_pads}},
                      {"count_include_pad", int64_t{count_pad}}},
                     "pool", m.s4(16, ph));
  EXPECT_EQ(ph, h) << "the test wants the pool branch as large as the 1x1 branch";
  auto b2 = m.conv(pool, "b2", 16, 8, 1, h);
  auto cat = m.b.op("Concat", {b1, b2}, {{"axis", int64_t{1}}}, "cat", m.s4(16, h));
  auto last = m.conv(cat, "last", 16, 12, 3, h);
  m.b.output(m.b.op("GlobalAveragePool", {last}, {}, "gap", m.s4(12, 1)));
  return m.b.build();
}

std::vector<FusionGroup> conv_relu_groups(std::initializer_list<const char*> convs) {
  std::vector<FusionGroup> groups;
  for (const char* c : convs)
    groups.push_back(make_group(std::string("g_") + c, {c, std::string(c) + "_relu"}));
  return groups;
}

class InceptionPool : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(Batch, InceptionPool, ::testing::Values(1, 2),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

TEST_P(InceptionPool, PadFoldsIntoTheAveragePoolAndTheBlockStaysNhwc) {
  // PyTorch's avg_pool2d(3, stride 1, padding 1, count_include_pad=True) export.
  const Graph g = inception_block(GetParam(), 1, 0, false, false);
  FusedProgram p = testing::post_op_program(g, conv_relu_groups({"stem", "b1", "b2", "last"}));
  EXPECT_FALSE(has_step_of(p.steps, "Pad"));
  const Step& pool = step_named(p.steps, "pool");
  EXPECT_EQ(pool.op_type, "Pad+AveragePool");
  EXPECT_EQ(pool.nodes.size(), 2u);
  EXPECT_TRUE(is_nhwc_max_pool_kernel(pool.kernel.get()));
  EXPECT_TRUE(is_nhwc_concat_kernel(step_named(p.steps, "cat").kernel.get()));
  // stem, b1, the pool, b2, cat and last: every tensor between the Convs. Planning
  // again finds the same.
  std::vector<Step> steps = p.steps;
  EXPECT_EQ(plan_conv_layouts(g, steps), 6);
  expect_matches_unfused(g, p, GetParam(), 8, 9, "inception");
}

TEST(InceptionPool, PadIntoAPoolCountingItsOwnPadsMergesThePads) {
  // Pad 1 plus the pool's own pads 1 (counted): one 5x5 pool with pads 2.
  const Graph g = inception_block(1, 1, 1, true, false);
  std::vector<Step> steps = make_steps(g);
  EXPECT_EQ(fold_pads_into_pools(g, steps), 1);
  const Step& pool = step_named(steps, "pool");
  auto merged = folded_average_pool(g, pool);
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->attrs.get_ints("pads"), (Ints{2, 2, 2, 2}));
  EXPECT_EQ(merged->attrs.get_int("count_include_pad", 0), 1);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 8, 9, 9}, 5)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor folded(g, steps, ExecutorOptions{2});
  testing::expect_two_runs_match(folded, in, expected, "merged pads", 1e-5);
}

TEST(InceptionPool, APadThatCannotFoldStaysAStep) {
  // Read elsewhere (a graph output): the Pad stays.
  {
    const Graph g = inception_block(1, 1, 0, false, true);
    std::vector<Step> steps = make_steps(g);
    EXPECT_EQ(fold_pads_into_pools(g, steps), 0);
  }
  // The pool pads itself without counting its pads: the Pad's zeros would count where
  // the pool's own pads do not.
  {
    const Graph g = inception_block(1, 1, 1, false, false);
    std::vector<Step> steps = make_steps(g);
    EXPECT_EQ(fold_pads_into_pools(g, steps), 0);
    EXPECT_TRUE(has_step_of(steps, "Pad"));
  }
}

// Conv -> AveragePool (geometry below) -> Conv: the pool runs on NHWC and matches the
// runtime's NCHW AveragePool, partial windows (ceil_mode, pads) included.
struct PoolCase {
  int64_t k, s, p;
  bool ceil, count_pad;
};

class NhwcAveragePool : public ::testing::TestWithParam<PoolCase> {};
INSTANTIATE_TEST_SUITE_P(Geometry, NhwcAveragePool,
                         ::testing::Values(PoolCase{3, 1, 1, false, false},
                                           PoolCase{3, 1, 1, false, true},
                                           PoolCase{2, 2, 0, false, false},
                                           PoolCase{3, 2, 1, true, false},
                                           PoolCase{3, 2, 1, true, true}));

TEST_P(NhwcAveragePool, MatchesTheRuntimesPool) {
  const PoolCase pc = GetParam();
  Builder m;
  const int64_t h = 10;
  auto x = m.b.input("x", {1, 8, h, h});
  auto c1 = m.conv(x, "c1", 8, 16, 3, h);
  const int64_t span = h + 2 * pc.p - pc.k;
  int64_t oh = (pc.ceil ? (span + pc.s - 1) / pc.s : span / pc.s) + 1;
  if (pc.ceil && (oh - 1) * pc.s >= h + pc.p) --oh;
  auto pool = m.b.op("AveragePool", {c1},
                     {{"kernel_shape", Ints{pc.k, pc.k}},
                      {"strides", Ints{pc.s, pc.s}},
                      {"pads", Ints{pc.p, pc.p, pc.p, pc.p}},
                      {"ceil_mode", int64_t{pc.ceil}},
                      {"count_include_pad", int64_t{pc.count_pad}}},
                     "pool", m.s4(16, oh));
  auto c2 = m.conv(pool, "c2", 16, 8, 3, oh);
  m.b.output(m.b.op("GlobalAveragePool", {c2}, {}, "gap", m.s4(8, 1)));
  const Graph g = m.b.build();
  FusedProgram p = testing::post_op_program(g, conv_relu_groups({"c1", "c2"}));
  EXPECT_TRUE(is_nhwc_max_pool_kernel(step_named(p.steps, "pool").kernel.get()));
  expect_matches_unfused(g, p, 1, 8, h, "average pool");
}

// A DenseNet block: stem 3x3 -> {BN -> Relu -> 1x1 -> 3x3} -> Concat(stem, that) -> BN
// -> Relu -> 1x1 -> GlobalAveragePool.
TEST(DenseBlock, BatchNormAfterAConcatKeepsTheBlockNhwc) {
  Builder m;
  const int64_t h = 8;
  auto x = m.b.input("x", {1, 8, h, h});
  auto stem = m.conv(x, "stem", 8, 16, 3, h);
  auto bn1 = m.batch_norm(stem, "bn1", 16, h);
  auto r1 = m.b.op("Relu", {bn1}, {}, "bn1_relu", m.s4(16, h));
  auto c1 = m.conv(r1, "c1", 16, 24, 1, h);
  auto c2 = m.conv(c1, "c2", 24, 8, 3, h, /*relu=*/false);
  auto cat = m.b.op("Concat", {stem, c2}, {{"axis", int64_t{1}}}, "cat", m.s4(24, h));
  auto bn2 = m.batch_norm(cat, "bn2", 24, h);
  auto r2 = m.b.op("Relu", {bn2}, {}, "bn2_relu", m.s4(24, h));
  auto c3 = m.conv(r2, "c3", 24, 16, 1, h);
  m.b.output(m.b.op("GlobalAveragePool", {c3}, {}, "gap", m.s4(16, 1)));
  const Graph g = m.b.build();
  FusedProgram p = testing::post_op_program(g, conv_relu_groups({"stem", "c1", "c3"}));
  // Each BatchNormalization and its Relu: one step, one pass, on NHWC.
  for (const char* bn : {"bn1", "bn2"}) {
    const Step& s = step_named(p.steps, bn);
    EXPECT_EQ(s.op_type, "BatchNormalization+Relu") << bn;
    EXPECT_TRUE(is_nhwc_batch_norm_kernel(s.kernel.get())) << bn;
  }
  EXPECT_EQ(std::count_if(p.steps.begin(), p.steps.end(),
                          [](const Step& s) { return s.op_type == "Relu"; }),
            0);
  EXPECT_TRUE(is_nhwc_concat_kernel(step_named(p.steps, "cat").kernel.get()));
  // stem, bn1_relu, c1, c2, cat, bn2_relu, c3.
  std::vector<Step> steps = p.steps;
  EXPECT_EQ(plan_conv_layouts(g, steps), 7);
  expect_matches_unfused(g, p, 1, 8, h, "dense block");
}

TEST(DenseBlock, ABatchNormOfTheGraphInputFoldsItsReluAndStaysNchw) {
  // x (NCHW, a graph input) -> BN -> Relu -> 3x3 -> GlobalAveragePool.
  Builder m;
  auto x = m.b.input("x", {2, 8, 6, 6});
  m.n = 2;
  auto bn = m.batch_norm(x, "bn", 8, 6);
  auto r = m.b.op("Relu", {bn}, {}, "bn_relu", m.s4(8, 6));
  auto c = m.conv(r, "c", 8, 8, 3, 6);
  m.b.output(m.b.op("GlobalAveragePool", {c}, {}, "gap", m.s4(8, 1)));
  const Graph g = m.b.build();
  FusedProgram p = testing::post_op_program(g, conv_relu_groups({"c"}));
  const Step& s = step_named(p.steps, "bn");
  EXPECT_EQ(s.op_type, "BatchNormalization+Relu");
  EXPECT_FALSE(is_nhwc_batch_norm_kernel(s.kernel.get()));
  expect_matches_unfused(g, p, 2, 8, 6, "bn on the input");
}

TEST(DenseBlock, ABatchNormWithoutConstantParametersIsNoCandidate) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 5, 5});
  auto scale = b.input("scale", {4});
  std::vector<ValueId> in{x, scale};
  for (const char* p : {"bias", "mean", "var"})
    in.push_back(b.constant(p, TensorData::from_floats({4}, {1, 1, 1, 1})));
  b.output(b.op("BatchNormalization", in, {}, "bn", Shape::of({1, 4, 5, 5})));
  const Graph g = b.build();
  const std::vector<Step> steps = make_steps(g);
  EXPECT_FALSE(is_nhwc_batch_norm_candidate(g, step_named(steps, "bn")));
}

}  // namespace
}  // namespace fx
