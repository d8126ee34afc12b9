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

}  // namespace
}  // namespace fx
