// SPDX-License-Identifier: Apache-2.0
// A group is credited only with the launches its generated code removes: ResNet's tail
// (Add, Relu, GlobalAveragePool, Flatten) is found as one group, but GlobalAveragePool
// has no emitter, so Generate runs it as a generated part plus runtime kernels. With
// use_generated_kernels the analysis counts those launches (and their overhead), the
// same count Generate's text gives; a group that is one kernel keeps its estimate.

#include "codegen/group_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/fusion_finder.h"
#include "codegen/fused_program.h"
#include "device/device_presets.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

Graph resnet_tail() {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 512, 7, 7});
  const ValueId skip = b.input("skip", {1, 512, 7, 7});
  ValueId h = b.op("Add", {x, skip}, {}, "add");
  h = b.op("Relu", {h}, {}, "relu");
  h = b.op("GlobalAveragePool", {h}, {}, "avgpool", Shape::of({1, 512, 1, 1}));
  b.output(b.op("Flatten", {h}, {{"axis", int64_t{1}}}, "flatten", Shape::of({1, 512})));
  return b.build();
}

const FusionGroup* group_with(const AnalysisResult& r, const std::string& op) {
  for (const FusionGroup& g : r.groups)
    if (std::find(g.ops.begin(), g.ops.end(), op) != g.ops.end()) return &g;
  return nullptr;
}

TEST(GroupKernels, AGroupGenerateCannotMakeOneKernelIsCreditedWithItsRealLaunches) {
  const Graph g = resnet_tail();
  FusionOptions plain;
  const AnalysisResult optimistic = analyze_fusion(g, preset_nvidia_h100(), plain);
  const FusionGroup* before = group_with(optimistic, "GlobalAveragePool");
  ASSERT_NE(before, nullptr) << "the tail is expected to be one group";
  ASSERT_EQ(before->estimate.launches_after, 1);

  const GroupKernels k = plan_group_kernels(g, before->node_ids, before->id);
  EXPECT_FALSE(k.one_kernel());
  EXPECT_EQ(k.form, GroupKernels::Form::Parts);
  EXPECT_NE(k.reason.find("GlobalAveragePool"), std::string::npos) << k.reason;
  // Every member runs in exactly one of the kernels.
  std::size_t covered = 0;
  for (const auto& kernel : k.kernels) covered += kernel.size();
  EXPECT_EQ(covered, before->node_ids.size());

  FusionOptions honest;
  use_generated_kernels(honest, g);
  const AnalysisResult r = analyze_fusion(g, preset_nvidia_h100(), honest);
  const FusionGroup* after = group_with(r, "GlobalAveragePool");
  ASSERT_NE(after, nullptr);
  EXPECT_GT(after->estimate.launches_after, 1);
  EXPECT_LE(after->estimate.launches_after, int(k.kernels.size()));
  EXPECT_LT(after->estimate.launches_saved(), before->estimate.launches_saved());
  // The extra launches cost their overhead; the totals follow the groups.
  const double extra = after->estimate.launches_after - before->estimate.launches_after;
  EXPECT_NEAR(after->estimate.time_after_s - before->estimate.time_after_s,
              extra * preset_nvidia_h100().launch_overhead_s, 1e-12);
  EXPECT_EQ(r.kernels_after - optimistic.kernels_after, int64_t(extra));

  // Generate says the same.
  const std::string text = generate_group_source(g, *after);
  EXPECT_NE(text.find("Not generated as one kernel"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(k.kernels.size()) + " kernel launches"), std::string::npos)
      << text;
}

TEST(GroupKernels, AGroupThatIsOneKernelKeepsItsEstimate) {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 64, 56, 56});
  const ValueId y = b.input("y", {1, 64, 56, 56});
  b.output(b.op("Relu", {b.op("Add", {x, y}, {}, "add")}, {}, "relu"));
  const Graph g = b.build();
  FusionOptions honest;
  use_generated_kernels(honest, g);
  const AnalysisResult plain = analyze_fusion(g, preset_nvidia_h100(), {});
  const AnalysisResult r = analyze_fusion(g, preset_nvidia_h100(), honest);
  ASSERT_EQ(r.groups.size(), 1u);
  ASSERT_EQ(plain.groups.size(), 1u);
  EXPECT_TRUE(plan_group_kernels(g, r.groups[0].node_ids, r.groups[0].id).one_kernel());
  EXPECT_EQ(r.groups[0].estimate.launches_after, 1);
  EXPECT_EQ(r.groups[0].estimate.launches_saved(), plain.groups[0].estimate.launches_saved());
  EXPECT_DOUBLE_EQ(r.groups[0].estimate.time_after_s, plain.groups[0].estimate.time_after_s);
  EXPECT_EQ(r.kernels_after, plain.kernels_after);
}

// The option is bound to the analysed graph: the bodies of control flow are analysed
// without it (their node ids are another graph's), each body group one kernel. Before,
// an If's branch groups were looked up in the outer graph (the GUI crashed on
// onnxtest_loop11).
TEST(GroupKernels, ControlFlowBodiesAreAnalysedWithoutTheOuterGraphsAnswer) {
  GraphBuilder branch;
  Value outer;
  outer.name = "r";
  outer.dtype = DType::Float32;
  outer.shape = Shape::of({1024});
  ValueId v = branch.graph().add_value(std::move(outer));
  branch.graph().add_outer_ref(v);
  for (const char* op : {"Neg", "Exp", "Relu"})
    v = branch.op(op, {v}, {}, std::string("then_") + op);
  branch.output(v);
  auto then_g = std::make_shared<const Graph>(branch.build());

  GraphBuilder b;
  const ValueId x = b.input("x", {1024});
  const ValueId cond = b.input("cond", {}, DType::Bool);
  const ValueId r = b.op("Relu", {x}, {}, "relu");
  b.graph().value(r).name = "r";
  const ValueId y = b.op("If", {cond, r},
                         {{"then_branch", SubgraphRef{"then", 3, then_g}},
                          {"else_branch", SubgraphRef{"else", 3, then_g}}},
                         "if", Shape::of({1024}), DType::Float32);
  b.graph().node(b.graph().find_node("if")).implicit_inputs = 1;
  b.output(b.op("Exp", {y}, {}, "after"));
  const Graph g = b.build();

  FusionOptions honest;
  use_generated_kernels(honest, g);
  const AnalysisResult res = analyze_fusion(g, preset_nvidia_h100(), honest);
  ASSERT_FALSE(res.subgraphs.empty());
  bool body_group = false;
  for (const auto& sub : res.subgraphs)
    for (const FusionGroup& fg : sub.result.groups) {
      body_group = true;
      EXPECT_EQ(fg.estimate.launches_after, 1);
    }
  EXPECT_TRUE(body_group);
}

}  // namespace
}  // namespace fx
