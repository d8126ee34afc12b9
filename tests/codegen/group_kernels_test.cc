// SPDX-License-Identifier: Apache-2.0
// A group is credited only with the launches its generated code removes: ResNet's tail
// (Add, Relu, GlobalAveragePool, Flatten) is found as one group, but GlobalAveragePool
// has no emitter, so Generate runs it as a generated part plus runtime kernels. With
// use_generated_kernels the analysis counts those launches (and their overhead), the
// same count Generate's text gives; a group that is one kernel keeps its estimate.

#include "codegen/group_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/cost_model.h"
#include "analysis/fusion_finder.h"
#include "analysis/saving_model.h"
#include "codegen/fused_program.h"
#include "device/device_presets.h"
#include "device/saving_coefficients.h"
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
  use_generated_kernels(honest);
  const AnalysisResult r = analyze_fusion(g, preset_nvidia_h100(), honest);
  const FusionGroup* after = group_with(r, "GlobalAveragePool");
  ASSERT_NE(after, nullptr);
  EXPECT_GT(after->estimate.launches_after, 1);
  EXPECT_LE(after->estimate.launches_after, int(k.kernels.size()));
  EXPECT_LT(after->estimate.launches_saved(), before->estimate.launches_saved());
  // The traffic and time after fusion are those of the kernels that run, each writing
  // what the next one reads, not those of one fused kernel.
  const CostModel cost(g, preset_nvidia_h100());
  int64_t split_bytes = 0;
  double split_time = 0;
  for (const auto& kernel : k.kernels) {
    const Cost c = kernel.size() == 1 ? cost.node(kernel[0]) : cost.group(kernel);
    split_bytes += c.bytes();
    split_time += c.time_s;
  }
  EXPECT_EQ(after->estimate.bytes_after, split_bytes);
  EXPECT_GT(after->estimate.bytes_after, before->estimate.bytes_after);
  EXPECT_LT(after->estimate.bytes_saved(), before->estimate.bytes_saved());
  EXPECT_NEAR(after->estimate.time_after_s, split_time, 1e-12);
  // The totals follow the groups.
  const int64_t extra = after->estimate.launches_after - before->estimate.launches_after;
  EXPECT_EQ(r.kernels_after - optimistic.kernels_after, extra);
  EXPECT_EQ(r.bytes_after - optimistic.bytes_after,
            after->estimate.bytes_after - before->estimate.bytes_after);

  // Generate says the same.
  const std::string text = generate_group_source(g, *after);
  EXPECT_NE(text.find("Not generated as one kernel"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(k.kernels.size()) + " kernel launches"), std::string::npos)
      << text;
}

// Relu -> GlobalAveragePool is found as a group (the Relu's output need not be written),
// but GlobalAveragePool has no emitter and a run of one node is not generated: both
// members would run their own kernels. Such a group removes nothing and is not
// proposed; the pair says why.
TEST(GroupKernels, AGroupWhoseKernelsRunEachMemberAloneIsNotProposed) {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 512, 7, 7});
  const ValueId h = b.op("Relu", {x}, {}, "relu");
  b.output(b.op("GlobalAveragePool", {h}, {}, "avgpool", Shape::of({1, 512, 1, 1})));
  const Graph g = b.build();
  const AnalysisResult optimistic = analyze_fusion(g, preset_nvidia_h100(), {});
  ASSERT_NE(group_with(optimistic, "GlobalAveragePool"), nullptr)
      << "without the generated kernels' answer the pair is one group";
  const FusionGroup& found = optimistic.groups[0];
  ASSERT_EQ(plan_group_kernels(g, found.node_ids, found.id).kernels.size(), 2u);

  FusionOptions honest;
  use_generated_kernels(honest);
  const AnalysisResult r = analyze_fusion(g, preset_nvidia_h100(), honest);
  EXPECT_TRUE(r.groups.empty());
  EXPECT_EQ(r.kernels_after, r.kernels_before);
  EXPECT_EQ(r.bytes_after, r.bytes_before);
  ASSERT_EQ(r.not_fused.size(), 1u);
  EXPECT_EQ(r.not_fused[0].reason, NotFusedReason::NotOneKernel);
  EXPECT_EQ(r.not_fused[0].producer, "relu");
  EXPECT_NE(r.not_fused[0].text.find("GlobalAveragePool"), std::string::npos)
      << r.not_fused[0].text;
  EXPECT_NE(explain_pair(r, "relu", "avgpool").find("not_one_kernel"), std::string::npos);
}

TEST(GroupKernels, AGroupThatIsOneKernelKeepsItsEstimate) {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 64, 56, 56});
  const ValueId y = b.input("y", {1, 64, 56, 56});
  b.output(b.op("Relu", {b.op("Add", {x, y}, {}, "add")}, {}, "relu"));
  const Graph g = b.build();
  FusionOptions honest;
  use_generated_kernels(honest);
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
  use_generated_kernels(honest);
  const AnalysisResult res = analyze_fusion(g, preset_nvidia_h100(), honest);
  ASSERT_FALSE(res.subgraphs.empty());
  bool body_group = false;
  for (const auto& sub : res.subgraphs)
    for (const FusionGroup& fg : sub.result.groups) {
      body_group = true;
      EXPECT_EQ(fg.estimate.launches_after, 1);
    }
  EXPECT_TRUE(body_group);

  // The bodies' groups are asked with the body's graph, as the outer groups are.
  std::vector<const Graph*> asked;
  FusionOptions spy;
  spy.kernels_of = [&](const Graph& graph, const std::vector<NodeId>& members) {
    asked.push_back(&graph);
    return GroupLaunches{{members}, {}};
  };
  analyze_fusion(g, preset_nvidia_h100(), spy);
  EXPECT_NE(std::find(asked.begin(), asked.end(), then_g.get()), asked.end());
}

// A body group that cannot be one kernel is counted as it runs, like an outer one: a
// Loop-like body's Relu -> GlobalAveragePool is no group, the tail's Add+Relu part is
// credited only with what it removes.
TEST(GroupKernels, ControlFlowBodyGroupsAreCountedAsTheirGeneratedKernels) {
  GraphBuilder branch;
  Value outer;
  outer.name = "r";
  outer.dtype = DType::Float32;
  outer.shape = Shape::of({1, 512, 7, 7});
  ValueId v = branch.graph().add_value(std::move(outer));
  branch.graph().add_outer_ref(v);
  v = branch.op("Relu", {v}, {}, "body_relu");
  branch.output(branch.op("GlobalAveragePool", {v}, {}, "body_pool", Shape::of({1, 512, 1, 1})));
  auto body = std::make_shared<const Graph>(branch.build());

  GraphBuilder b;
  const ValueId x = b.input("x", {1, 512, 7, 7});
  const ValueId cond = b.input("cond", {}, DType::Bool);
  const ValueId r = b.op("Exp", {x}, {}, "exp");
  b.graph().value(r).name = "r";
  const ValueId y = b.op("If", {cond, r},
                         {{"then_branch", SubgraphRef{"then", 2, body}},
                          {"else_branch", SubgraphRef{"else", 2, body}}},
                         "if", Shape::of({1, 512, 1, 1}), DType::Float32);
  b.graph().node(b.graph().find_node("if")).implicit_inputs = 1;
  b.output(y);
  const Graph g = b.build();

  const AnalysisResult plain = analyze_fusion(g, preset_nvidia_h100(), {});
  ASSERT_FALSE(plain.subgraphs.empty());
  ASSERT_FALSE(plain.subgraphs[0].result.groups.empty()) << "one kernel assumed: a body group";
  FusionOptions honest;
  use_generated_kernels(honest);
  const AnalysisResult res = analyze_fusion(g, preset_nvidia_h100(), honest);
  ASSERT_EQ(res.subgraphs.size(), plain.subgraphs.size());
  for (const auto& sub : res.subgraphs) {
    EXPECT_TRUE(sub.result.groups.empty()) << sub.attribute;
    EXPECT_EQ(sub.result.kernels_after, sub.result.kernels_before);
    ASSERT_EQ(sub.result.not_fused.size(), 1u);
    EXPECT_EQ(sub.result.not_fused[0].reason, NotFusedReason::NotOneKernel);
  }
}

std::shared_ptr<TensorData> ones_of(DType t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  return TensorData::owned(t, dims, std::vector<std::byte>(n * dtype_size(t), std::byte{1}));
}

// x uint8 -> DequantizeLinear -> Conv (DQ'd int8 weights, int32 bias) -> Relu ->
// QuantizeLinear: the runtime builds it as one oneDNN int8 primitive, so the analysis
// credits it with one launch (it was counted as generated parts and not proposed).
TEST(GroupKernels, AQdqGroupIsOneInt8KernelAndKeepsItsCredit) {
  GraphBuilder b;
  const Shape xs = Shape::of({1, 8, 16, 16}), ys = Shape::of({1, 16, 16, 16});
  const ValueId x = b.input("x", {1, 8, 16, 16}, DType::UInt8);
  const ValueId sx = b.constant("sx", TensorData::from_floats({}, {0.02f}));
  const ValueId zx = b.constant("zx", ones_of(DType::UInt8, {}));
  const ValueId dq_x = b.op("DequantizeLinear", {x, sx, zx}, {}, "dq_x", xs, DType::Float32);
  const ValueId w = b.constant("w", ones_of(DType::Int8, {16, 8, 3, 3}));
  const ValueId sw = b.constant("sw", TensorData::from_floats({16}, std::vector<float>(16, 0.01f)));
  const ValueId zw = b.constant("zw", ones_of(DType::Int8, {16}));
  const ValueId dq_w = b.op("DequantizeLinear", {w, sw, zw}, {{"axis", int64_t{0}}}, "dq_w",
                            Shape::of({16, 8, 3, 3}), DType::Float32);
  const ValueId conv = b.op("Conv", {dq_x, dq_w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                            "conv", ys, DType::Float32);
  const ValueId relu = b.op("Relu", {conv}, {}, "relu", ys, DType::Float32);
  const ValueId sy = b.constant("sy", TensorData::from_floats({}, {0.05f}));
  const ValueId zy = b.constant("zy", ones_of(DType::UInt8, {}));
  b.output(b.op("QuantizeLinear", {relu, sy, zy}, {}, "q", ys, DType::UInt8));
  const Graph g = b.build();

  FusionOptions honest;
  use_generated_kernels(honest);
  const AnalysisResult r = analyze_fusion(g, preset_nvidia_h100(), honest);
  const FusionGroup* group = group_with(r, "Conv");
  ASSERT_NE(group, nullptr) << "the QDQ group must still be proposed";
  EXPECT_EQ(group->pattern, "qdq_conv_int8");
  EXPECT_EQ(group->estimate.launches_after, 1);
  const GroupKernels k = plan_group_kernels(g, group->node_ids, group->id);
  EXPECT_EQ(k.form, GroupKernels::Form::QdqInt8);
  ASSERT_TRUE(k.qdq.has_value());
  EXPECT_TRUE(k.one_kernel());
}

// A profile whose saving model is fitted for `c`: members, the fused cost, and a large
// relayout coefficient (which only a fused anchor earns).
DeviceProfile with_saving_model(KernelClass c) {
  DeviceProfile p = preset_nvidia_h100();
  p.saving_model.groups = 40;
  p.saving_model.fitted_to = "unit test";
  auto& k = p.saving_model.classes[static_cast<std::size_t>(c)];
  k.groups = 40;
  k.fitted = true;
  k.coefficients = {1, 0.5, 1, 5, 0, 1, 0, 0, 0, 0};
  return p;
}

// The group as FusionState::estimate hands it to the saving model.
GroupTermsSample sample_of(const Graph& g, const DeviceProfile& p, const FusionGroup& group) {
  const CostModel cost(g, p);
  GroupTermsSample s;
  for (NodeId n : group.node_ids)
    if (!cost.op_class(n).no_kernel) s.unfused.push_back(terms_of(cost.node(n)));
  s.fused = terms_of(cost.group(group.node_ids));
  s.bytes_saved = double(group.estimate.bytes_saved());
  s.launches_saved = double(group.estimate.launches_saved());
  return s;
}

// A group codegen splits into several kernels is predicted by the saving model from
// those kernels, as calibration fitted it on the results of such groups (their kernels
// after), not by the difference of kernel times.
TEST(GroupKernels, TheSavingModelPredictsASplitGroupFromTheKernelsThatRun) {
  const Graph g = resnet_tail();
  FusionOptions honest;
  use_generated_kernels(honest);
  const DeviceProfile p = with_saving_model(KernelClass::Elementwise);
  const AnalysisResult r = analyze_fusion(g, p, honest);
  const FusionGroup* group = group_with(r, "GlobalAveragePool");
  ASSERT_NE(group, nullptr);
  ASSERT_GT(group->estimate.launches_after, 1);
  const GroupKernels k = plan_group_kernels(g, group->node_ids, group->id);
  GroupTermsSample s = sample_of(g, p, *group);
  const CostModel cost(g, p);
  for (const auto& kernel : k.kernels)
    if (kernel.size() > 1 || !cost.op_class(kernel[0]).no_kernel)
      s.after_kernels.push_back(
          terms_of(kernel.size() == 1 ? cost.node(kernel[0]) : cost.group(kernel)));
  // Slowest first, as a result lists its kernels.
  std::stable_sort(s.after_kernels.begin(), s.after_kernels.end(),
                   [&](auto& a, auto& b) { return kernel_time(p, a) > kernel_time(p, b); });
  const SavingPrediction expected = predict_saving(p.saving_model, p, s);
  ASSERT_TRUE(expected.fitted);
  EXPECT_EQ(expected.fused_class, KernelClass::Elementwise);
  EXPECT_TRUE(group->estimate.saving_from_model()) << group->estimate.saving_label();
  EXPECT_NEAR(group->estimate.time_saved_s() * 1e6, expected.saved_us, 1e-9);
}

// Conv -> HardSigmoid -> Mul(conv, HardSigmoid): the Mul reads the conv's output twice,
// which oneDNN's post-ops do not express, so the group runs the runtime's conv kernel and
// then the generated epilogue. The saving model then credits the group with its members
// alone: the anchor is the unfused one (no relayout saved).
TEST(GroupKernels, AConvRunByItsRuntimeKernelIsNotCreditedWithAFusedAnchor) {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 16, 28, 28});
  const ValueId w = b.constant("w", ones_of(DType::Float32, {16, 16, 3, 3}));
  const ValueId c = b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv",
                         Shape::of({1, 16, 28, 28}));
  const ValueId hs = b.op("HardSigmoid", {c}, {}, "hsig");
  b.output(b.op("Mul", {c, hs}, {}, "mul"));
  const Graph g = b.build();
  FusionOptions honest;
  use_generated_kernels(honest);
  const DeviceProfile p = with_saving_model(KernelClass::Conv);
  const AnalysisResult r = analyze_fusion(g, p, honest);
  const FusionGroup* group = group_with(r, "Conv");
  ASSERT_NE(group, nullptr);
  ASSERT_EQ(group->node_ids.size(), 3u);
  const GroupKernels k = plan_group_kernels(g, group->node_ids, group->id);
  ASSERT_EQ(k.form, GroupKernels::Form::Generated) << k.no_post_ops;
  ASSERT_TRUE(k.whole && k.whole->anchor != kNoNode);
  GroupTermsSample s = sample_of(g, p, *group);
  ASSERT_GT(s.unfused[0].relayout_bytes, 0);  // a spatial conv: a fused one would save it
  s.anchor_runtime = true;
  const double members_only = predict_saving(p.saving_model, p, s).saved_us;
  s.anchor_runtime = false;
  const double fused_anchor = predict_saving(p.saving_model, p, s).saved_us;
  EXPECT_GT(fused_anchor, members_only + 1e-3);
  ASSERT_TRUE(group->estimate.saving_from_model()) << group->estimate.saving_label();
  EXPECT_NEAR(group->estimate.time_saved_s() * 1e6, members_only, 1e-9);
}

// MatMul -> Add -> Relu is one oneDNN matmul with post-ops (codegen tries that before
// generating code): its anchor is fused, and the saving model credits it as such.
TEST(GroupKernels, AMatMulWithPostOpsIsCreditedWithAFusedAnchor) {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 64, 128});
  const ValueId w = b.constant("w", ones_of(DType::Float32, {128, 256}));
  const ValueId bias = b.constant("bias", ones_of(DType::Float32, {256}));
  const ValueId mm = b.op("MatMul", {x, w}, {}, "mm", Shape::of({1, 64, 256}));
  b.output(b.op("Relu", {b.op("Add", {mm, bias}, {}, "add")}, {}, "relu"));
  const Graph g = b.build();
  FusionOptions honest;
  use_generated_kernels(honest);
  DeviceProfile p = with_saving_model(KernelClass::MatMul);
  p.saving_model.classes[static_cast<std::size_t>(KernelClass::MatMul)].coefficients = {
      1, 0.5, 1, 0, 0, 1, 3, 0, 0, 0};  // anchor_memory: what a fused anchor changes
  const AnalysisResult r = analyze_fusion(g, p, honest);
  const FusionGroup* group = group_with(r, "MatMul");
  ASSERT_NE(group, nullptr);
  ASSERT_EQ(group->node_ids.size(), 3u);
  GroupTermsSample s = sample_of(g, p, *group);
  const double fused_anchor = predict_saving(p.saving_model, p, s).saved_us;
  s.anchor_runtime = true;
  EXPECT_GT(fused_anchor, predict_saving(p.saving_model, p, s).saved_us + 1e-3);
  ASSERT_TRUE(group->estimate.saving_from_model()) << group->estimate.saving_label();
  EXPECT_NEAR(group->estimate.time_saved_s() * 1e6, fused_anchor, 1e-9);
}

}  // namespace
}  // namespace fx
