// SPDX-License-Identifier: Apache-2.0
// The pointwise_depthwise kernel (fused_kernels/pointwise_depthwise_kernel.h) against the
// unfused runtime: 1x1 Conv (+ Relu/Clip) -> depthwise Conv (+ Relu/Clip) on small odd
// maps, strides 1 and 2, 3x3 and 5x5, asymmetric pads, channels on and off the 16-wide
// fast path, batch 1 and 2, one to three threads; the default chunking (one chunk per
// band on such maps) and one output row per chunk (the rows a chunk shares with the
// previous one moved, not expanded again); NCHW at the graph's edges and NHWC between
// Convs (the layout plan).

#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/codegen_test_util.h"
#include "codegen/fused_program.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "fused_kernels/pointwise_depthwise_kernel.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::random_floats;
using Ints = std::vector<int64_t>;

struct Case {
  int64_t n, ci, ce, h, w, k, stride;
  Ints pads;         // top, left, bottom, right
  const char* act1;  // "Clip", "Relu" or "" (none)
  const char* act2;
  bool convs_around;  // a 1x1 Conv before and after: NHWC in and out
};

std::string case_name(const Case& c) {
  std::string s = "n" + std::to_string(c.n) + "ci" + std::to_string(c.ci) + "ce" +
                  std::to_string(c.ce) + "_" + std::to_string(c.h) + "x" + std::to_string(c.w) +
                  "k" + std::to_string(c.k) + "s" + std::to_string(c.stride) + "p";
  for (auto p : c.pads) s += std::to_string(p);
  s += std::string("_") + (*c.act1 ? c.act1 : "none") + (*c.act2 ? c.act2 : "none");
  return s + (c.convs_around ? "_nhwc" : "_nchw");
}

// Test names and failure messages show the case, not its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << case_name(c);
}

ValueId weights(GraphBuilder& b, const std::string& name, Ints d, uint32_t seed) {
  return b.constant(
      name, TensorData::from_floats(
                d, random_floats(static_cast<std::size_t>(dims_numel(d)), seed, -0.5f, 0.5f)));
}

ValueId activation(GraphBuilder& b, ValueId v, const char* op, const std::string& name) {
  if (std::string(op) == "Relu") return b.op("Relu", {v}, {}, name);
  if (std::string(op) == "Clip")
    return b.op("Clip",
                {v, b.constant(name + "_lo", TensorData::from_floats({}, {0.f})),
                 b.constant(name + "_hi", TensorData::from_floats({}, {0.4f}))},
                {}, name);
  return v;
}

// Members of the pointwise_depthwise group in order, in `members`.
Graph block_graph(const Case& c, std::vector<std::string>& members) {
  GraphBuilder b;
  ValueId x = b.input("x", {c.n, c.ci, c.h, c.w});
  if (c.convs_around) x = b.op("Conv", {x, weights(b, "pre_w", {c.ci, c.ci, 1, 1}, 1)}, {}, "pre");
  ValueId e =
      b.op("Conv", {x, weights(b, "pw_w", {c.ce, c.ci, 1, 1}, 2), weights(b, "pw_b", {c.ce}, 3)},
           {}, "pw");
  members = {"pw"};
  if (*c.act1) members.push_back("act1");
  e = activation(b, e, c.act1, "act1");
  ValueId d =
      b.op("Conv", {e, weights(b, "dw_w", {c.ce, 1, c.k, c.k}, 4), weights(b, "dw_b", {c.ce}, 5)},
           {{"group", c.ce}, {"strides", Ints{c.stride, c.stride}}, {"pads", c.pads}}, "dw");
  members.push_back("dw");
  if (*c.act2) members.push_back("act2");
  d = activation(b, d, c.act2, "act2");
  if (c.convs_around) d = b.op("Conv", {d, weights(b, "post_w", {8, c.ce, 1, 1}, 6)}, {}, "post");
  b.output(d);
  return b.build();
}

class PointwiseDepthwiseKernel : public ::testing::TestWithParam<Case> {};

TEST_P(PointwiseDepthwiseKernel, MatchesUnfusedRuntime) {
  const Case& c = GetParam();
  std::vector<std::string> members;
  Graph g = block_graph(c, members);
  std::vector<FusionGroup> groups{testing::make_group("fg-pwdw", members)};
  CodegenOptions opt;
  opt.compile = false;  // oneDNN and our depthwise loop: no compiler
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_EQ(p.groups[0].outcome, GroupOutcome::DnnlPostOps) << p.groups[0].detail;
  auto it = std::find_if(p.steps.begin(), p.steps.end(),
                         [](const Step& s) { return s.name == "fg-pwdw"; });
  ASSERT_NE(it, p.steps.end());
  bool x_nhwc = false, out_nhwc = false;
  ASSERT_NE(pointwise_depthwise_prep(*it->kernel, &x_nhwc, &out_nhwc), nullptr);
  EXPECT_EQ(x_nhwc, c.convs_around);  // the layout plan's choice
  EXPECT_EQ(out_nhwc, c.convs_around);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({c.n, c.ci, c.h, c.w}, 7)}};
  for (int threads : {1, 2, 3}) {
    auto expected = Executor(g, ExecutorOptions{threads}).run(in);
    for (int64_t chunk : {int64_t{0}, int64_t{1}}) {
      std::vector<Step> steps = p.steps;
      auto& k = std::find_if(steps.begin(), steps.end(), [](const Step& s) {
                  return s.name == "fg-pwdw";
                })->kernel;
      auto prep = std::make_shared<PointwiseDepthwisePrep>(*shared_pointwise_depthwise_prep(*k));
      prep->chunk_bytes = chunk;  // 1: one output row per chunk
      k = make_pointwise_depthwise_kernel(prep, x_nhwc, out_nhwc);
      Executor fused(g, steps, ExecutorOptions{threads});
      for (int run = 0; run < 2; ++run) {  // the second run reuses the built parts
        auto actual = fused.run(in);
        ASSERT_EQ(actual.size(), 1u);
        auto d = testing::compare(expected, actual);
        EXPECT_LT(d.max_rel, 1e-4) << "threads " << threads << " chunk " << chunk;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PointwiseDepthwiseKernel,
    ::testing::Values(Case{1, 5, 32, 13, 11, 3, 1, {1, 1, 1, 1}, "Clip", "Clip", false},
                      Case{1, 5, 32, 13, 11, 3, 2, {1, 1, 1, 1}, "Clip", "Clip", true},
                      Case{2, 3, 24, 9, 14, 3, 2, {0, 1, 1, 0}, "Relu", "", false},
                      Case{1, 8, 48, 15, 15, 5, 1, {2, 2, 2, 2}, "", "Relu", true},
                      Case{1, 8, 64, 17, 10, 5, 2, {2, 1, 2, 1}, "Clip", "Relu", true},
                      Case{2, 7, 16, 6, 7, 3, 1, {1, 1, 1, 1}, "Clip", "Clip", true},
                      Case{1, 4, 20, 8, 8, 3, 3, {0, 0, 0, 0}, "Relu", "Clip", false}),
    [](const auto& info) { return case_name(info.param); });

TEST(PointwiseDepthwisePlan, RejectsGroupsThatAreNotTheChain) {
  std::vector<std::string> members;
  Graph g = block_graph(Case{1, 5, 32, 13, 11, 3, 1, {1, 1, 1, 1}, "Clip", "Clip", false}, members);
  std::string why;
  std::vector<NodeId> all, part;
  for (const auto& m : members) all.push_back(g.find_node(m));
  EXPECT_TRUE(plan_pointwise_depthwise(g, all, &why)) << why;
  part.assign(all.begin(), all.end() - 1);  // without the last Clip
  EXPECT_FALSE(plan_pointwise_depthwise(g, part, &why));
  EXPECT_NE(why.find("not exactly"), std::string::npos) << why;
  EXPECT_FALSE(plan_pointwise_depthwise(g, {g.find_node("dw")}, &why));
  // The generated-source view says how the group runs.
  std::string src = generate_group_source(g, testing::make_group("fg-pwdw", members));
  EXPECT_NE(src.find("depthwise loop dw"), std::string::npos) << src;
}

}  // namespace
}  // namespace fx
