// SPDX-License-Identifier: Apache-2.0
// Analysis re-states what the fused program does to the nodes it does not fuse
// (analysis/lone_kernels.h), since it cannot call the codegen: here both run on the same
// graphs and must agree. A lone Conv is a SpatialConv or OtherConv exactly when the
// layout plan turned its step into a fused conv kernel (conv_layout_plan.h), and a node
// is Merged exactly when the fused program folds it (a Pad) into its AveragePool or is
// that pool (pool_pad_fold.h).

#include <gtest/gtest.h>

#include <set>

#include "analysis/cost_model.h"
#include "analysis/lone_kernels.h"
#include "codegen/codegen_test_util.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using Ints = std::vector<int64_t>;
using testing::make_group;
using testing::random_floats;

struct Builder {
  GraphBuilder b;
  uint32_t seed = 1;
  static Shape s4(int64_t c, int64_t h) { return Shape::of({1, c, h, h}); }
  ValueId weights(const std::string& name, const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return b.constant(name, TensorData::from_floats(dims, random_floats(n, seed++)));
  }
  // Conv k x k (same padding), then a Relu named `name`_relu when `relu`.
  ValueId conv(ValueId in, const std::string& name, int64_t cin, int64_t cout, int64_t k, int64_t h,
               bool relu) {
    const int64_t p = k / 2;
    auto c = b.op("Conv", {in, weights(name + "_w", {cout, cin, k, k})},
                  {{"pads", Ints{p, p, p, p}}}, name, s4(cout, h));
    return relu ? b.op("Relu", {c}, {}, name + "_relu", s4(cout, h)) : c;
  }
  ValueId batch_norm(ValueId in, const std::string& name, int64_t c, int64_t h) {
    std::vector<ValueId> ins{in};
    for (const char* p : {"scale", "bias", "mean", "var"}) {
      const bool var = std::string(p) == "var";
      ins.push_back(b.constant(
          name + "_" + p,
          TensorData::from_floats({c}, random_floats(c, seed++, var ? 0.5f : -1, var ? 2.0f : 1))));
    }
    return b.op("BatchNormalization", ins, {}, name, s4(c, h));
  }
};

struct Outcome {
  std::set<std::string> adopted;  // lone Conv nodes run by a fused conv kernel
  std::set<std::string> merged;   // nodes of a Pad+AveragePool step
};

Outcome program_outcome(const Graph& g, const std::vector<FusionGroup>& groups) {
  const FusedProgram p = testing::post_op_program(g, groups);
  Outcome o;
  for (const Step& s : p.steps) {
    if (s.group_id) continue;
    if (s.op_type == "Pad+AveragePool")
      for (NodeId n : s.nodes) o.merged.insert(g.node(n).name);
    if (s.nodes.size() == 1 && g.node(s.nodes[0]).op_type == "Conv" &&
        fused_conv_prep(s.kernel.get()))
      o.adopted.insert(g.node(s.nodes[0]).name);
  }
  return o;
}

Outcome analysis_outcome(const Graph& g, const std::vector<FusionGroup>& groups) {
  std::vector<char> grouped(g.node_count(), 0);
  for (const FusionGroup& fg : groups)
    for (const std::string& name : fg.nodes)
      for (std::size_t i = 0; i < g.node_count(); ++i)
        if (g.node(NodeId(i)).name == name) grouped[i] = 1;
  DeviceProfile profile;
  profile.name = "test";
  profile.memory_bandwidth_bytes_per_s = 1e10;
  profile.peak_flops = 1e11;
  const CostModel cost(g, profile);
  const std::vector<LoneKind> kinds = lone_kinds(g, cost, grouped);
  Outcome o;
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    if (grouped[i]) continue;
    const std::string& name = g.node(NodeId(i)).name;
    if (kinds[i] == LoneKind::Merged) o.merged.insert(name);
    if (kinds[i] == LoneKind::SpatialConv || kinds[i] == LoneKind::OtherConv)
      o.adopted.insert(name);
  }
  return o;
}

void expect_agree(const Graph& g, const std::vector<FusionGroup>& groups, const Outcome& want) {
  const Outcome program = program_outcome(g, groups);
  const Outcome analysis = analysis_outcome(g, groups);
  EXPECT_EQ(program.adopted, want.adopted) << "the test's own expectation of the program";
  EXPECT_EQ(program.merged, want.merged) << "the test's own expectation of the program";
  EXPECT_EQ(analysis.adopted, program.adopted);
  EXPECT_EQ(analysis.merged, program.merged);
}

// stem 3x3 -> {1x1 b1, Pad -> AveragePool -> 1x1 b2} -> Concat -> 3x3 last -> GAP; the
// stem and `last` fused with their Relus, b1 and b2 lone. With `tap` the Pad's output is
// a graph output too (no fold).
Graph inception_block(bool tap) {
  Builder m;
  const int64_t h = 9;
  auto x = m.b.input("x", {1, 8, h, h});
  auto stem = m.conv(x, "stem", 8, 16, 3, h, true);
  auto b1 = m.conv(stem, "b1", 16, 8, 1, h, false);
  auto pads = m.b.constant("pads", TensorData::from_int64s({8}, {0, 0, 1, 1, 0, 0, 1, 1}));
  auto padded = m.b.op("Pad", {stem, pads}, {}, "pad", Builder::s4(16, h + 2));
  if (tap) m.b.output(padded);
  auto pool =
      m.b.op("AveragePool", {padded}, {{"kernel_shape", Ints{3, 3}}}, "pool", Builder::s4(16, h));
  auto b2 = m.conv(pool, "b2", 16, 8, 1, h, false);
  auto cat = m.b.op("Concat", {b1, b2}, {{"axis", int64_t{1}}}, "cat", Builder::s4(16, h));
  auto last = m.conv(cat, "last", 16, 12, 3, h, true);
  m.b.output(m.b.op("GlobalAveragePool", {last}, {}, "gap", Builder::s4(12, 1)));
  return m.b.build();
}

std::vector<FusionGroup> stem_and_last() {
  return {make_group("g_stem", {"stem", "stem_relu"}), make_group("g_last", {"last", "last_relu"})};
}

TEST(LoneKindsAgree, InceptionBlockPadFoldsAndTheLoneConvsJoinTheChain) {
  expect_agree(inception_block(false), stem_and_last(), {{"b1", "b2"}, {"pad", "pool"}});
}

TEST(LoneKindsAgree, APadReadElsewhereDoesNotFold) {
  // With the Pad's output a graph output too, the Pad stays a step of its own.
  EXPECT_TRUE(program_outcome(inception_block(true), stem_and_last()).merged.empty());
  EXPECT_TRUE(analysis_outcome(inception_block(true), stem_and_last()).merged.empty());
}

TEST(LoneKindsAgree, DenseBlockWithoutAnyGroupKeepsItsLoneConvsNhwc) {
  // The BatchNormalization and its Relu run as one step (no Pad fold): the convs on
  // either side exchange NHWC tensors through it.
  Builder m;
  const int64_t h = 8;
  auto x = m.b.input("x", {1, 8, h, h});
  auto stem = m.conv(x, "stem", 8, 16, 3, h, false);
  auto bn = m.batch_norm(stem, "bn", 16, h);
  auto r = m.b.op("Relu", {bn}, {}, "bn_relu", Builder::s4(16, h));
  auto c = m.conv(r, "c", 16, 8, 3, h, false);
  m.b.output(m.b.op("GlobalAveragePool", {c}, {}, "gap", Builder::s4(8, 1)));
  expect_agree(m.b.build(), {}, {{"stem", "c"}, {}});
}

TEST(LoneKindsAgree, APatchConvBetweenTheInputAndAReshapeRunsAsBefore) {
  // ViT's patch embedding: nothing around the Conv keeps NHWC.
  Builder m;
  auto x = m.b.input("x", {1, 3, 16, 16});
  auto c = m.b.op("Conv", {x, m.weights("w", {8, 3, 4, 4})}, {{"strides", Ints{4, 4}}}, "patch",
                  Builder::s4(8, 4));
  auto shape = m.b.constant("shape", TensorData::from_int64s({3}, {1, 8, 16}));
  m.b.output(m.b.op("Reshape", {c, shape}, {}, "flat", Shape::of({1, 8, 16})));
  expect_agree(m.b.build(), {}, {{}, {}});
}

TEST(LoneKindsAgree, ThreeDimensionalConvsRunAsBefore) {
  Builder m;
  auto x = m.b.input("x", {1, 4, 4, 6, 6});
  auto s5 = Shape::of({1, 4, 4, 6, 6});
  Ints p{1, 1, 1, 1, 1, 1};
  auto c1 = m.b.op("Conv", {x, m.weights("w1", {4, 4, 3, 3, 3})}, {{"pads", p}}, "c1", s5);
  auto r = m.b.op("Relu", {c1}, {}, "r", s5);
  m.b.output(m.b.op("Conv", {r, m.weights("w2", {4, 4, 3, 3, 3})}, {{"pads", p}}, "c2", s5));
  expect_agree(m.b.build(), {}, {{}, {}});
}

}  // namespace
}  // namespace fx
