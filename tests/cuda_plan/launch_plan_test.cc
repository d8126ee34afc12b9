// SPDX-License-Identifier: Apache-2.0
// Which GPU kernel each node or group gets, unfused and fused, and that the launch order
// produces every value before it is read.

#include "cuda_plan/launch_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "cuda_plan_test_util.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

LaunchKind kind_of(const Graph& g, const LaunchPlan& p, const std::string& node) {
  const int i = p.launch_of(g.find_node(node));
  EXPECT_GE(i, 0) << node;
  return i < 0 ? LaunchKind::View : p.launches[static_cast<std::size_t>(i)].kind;
}

// Every launch reads only graph inputs, constants or values an earlier launch wrote.
void expect_ordered(const Graph& g, const LaunchPlan& p) {
  std::set<ValueId> ready(g.inputs().begin(), g.inputs().end());
  for (const auto& l : p.launches) {
    for (ValueId v : l.inputs)
      EXPECT_TRUE(ready.count(v) || g.value(v).is_constant())
          << l.name << " reads " << g.value(v).name << " before it is written";
    ready.insert(l.outputs.begin(), l.outputs.end());
  }
  for (ValueId v : g.outputs()) EXPECT_TRUE(ready.count(v)) << g.value(v).name;
}

TEST(LaunchPlan, UnfusedIsOneKernelPerNodeOfTheRightKind) {
  const Graph g = testing::residual_cnn();
  const LaunchPlan p = build_launch_plan(g, {});
  EXPECT_EQ(kind_of(g, p, "conv1"), LaunchKind::Conv);
  EXPECT_EQ(kind_of(g, p, "relu1"), LaunchKind::Generated);
  EXPECT_EQ(kind_of(g, p, "pool"), LaunchKind::Pool);
  EXPECT_EQ(kind_of(g, p, "add"), LaunchKind::Generated);
  EXPECT_EQ(kind_of(g, p, "gap"), LaunchKind::Pool);
  EXPECT_EQ(kind_of(g, p, "flatten"), LaunchKind::View);
  EXPECT_EQ(kind_of(g, p, "fc"), LaunchKind::Matmul);
  EXPECT_EQ(p.launches.size(), g.node_count());
  EXPECT_EQ(p.kernel_count(), static_cast<int>(g.node_count()) - 1);
  EXPECT_EQ(p.generated.size(), 3u);  // relu1, add, relu2
  // relu1 and relu2 are the same kernel (dims are taken at run time): compiled once.
  EXPECT_EQ(p.unique_generated().size(), 2u);
  const auto entry = [&](const char* n) {
    return p
        .generated[static_cast<std::size_t>(
            p.launches[static_cast<std::size_t>(p.launch_of(g.find_node(n)))].generated)]
        .entry;
  };
  EXPECT_EQ(entry("relu1"), entry("relu2"));
  EXPECT_NE(entry("relu1"), entry("add"));
  for (const auto& l : p.launches) EXPECT_TRUE(l.epilogue.empty()) << l.name;
  expect_ordered(g, p);
}

TEST(LaunchPlan, ConvGroupsFoldBiasResidualAndReluIntoCudnn) {
  const Graph g = testing::residual_cnn();
  const FusionGroup a = testing::group_of(g, "fg-a", {"conv1", "relu1"}, "conv_bias_act");
  const FusionGroup b = testing::group_of(g, "fg-b", {"conv2", "add", "relu2"}, "conv_add_act");
  const LaunchPlan p = build_launch_plan(g, {&a, &b});
  const LaunchPlan unfused = build_launch_plan(g, {});
  EXPECT_EQ(p.kernel_count(), unfused.kernel_count() - 3);
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].status, "fused");
  EXPECT_EQ(p.groups[0].backend, "cudnn-conv+relu");
  EXPECT_EQ(p.groups[1].backend, "cudnn-conv+residual+relu");
  const Launch& l = p.launches[static_cast<std::size_t>(p.launch_of(g.find_node("add")))];
  EXPECT_EQ(l.kind, LaunchKind::Conv);
  EXPECT_EQ(l.epilogue.residual, g.find_value("pool:0"));
  EXPECT_TRUE(l.epilogue.relu);
  EXPECT_EQ(l.outputs, std::vector<ValueId>{g.find_value("relu2:0")});
  EXPECT_EQ(l.group, 1);
  EXPECT_EQ(p.launch_of(g.find_node("conv2")), p.launch_of(g.find_node("relu2")));
  expect_ordered(g, p);
}

TEST(LaunchPlan, MatmulBiasReluIsOneCublasLtLaunchAndTheRestGenerated) {
  const Graph g = testing::mlp_block();
  const FusionGroup mlp = testing::group_of(g, "fg-mlp", {"mm1", "add1", "relu"}, "matmul_add_act");
  const FusionGroup soft = testing::group_of(g, "fg-soft", {"scale", "softmax"}, "softmax");
  const LaunchPlan p = build_launch_plan(g, {&mlp, &soft});
  const Launch& l = p.launches[static_cast<std::size_t>(p.launch_of(g.find_node("relu")))];
  EXPECT_EQ(l.kind, LaunchKind::Matmul);
  EXPECT_EQ(l.epilogue.str(), "bias+relu");
  EXPECT_EQ(l.epilogue.bias, g.find_value("B1"));
  EXPECT_EQ(kind_of(g, p, "transpose"), LaunchKind::Copy);
  // scale + softmax: one generated row kernel.
  EXPECT_EQ(p.launch_of(g.find_node("scale")), p.launch_of(g.find_node("softmax")));
  EXPECT_EQ(kind_of(g, p, "softmax"), LaunchKind::Generated);
  EXPECT_EQ(p.groups[1].backend, "generated-cuda");
  // mm1+add1+relu -> 1, mm2, add2, transpose, scale+softmax -> 1.
  EXPECT_EQ(p.kernel_count(), 5);
  EXPECT_EQ(build_launch_plan(g, {}).kernel_count(), 8);
  expect_ordered(g, p);
}

TEST(LaunchPlan, AnchorWithAnEpilogueCublasLtCannotTakeRunsItThenAGeneratedKernel) {
  const Graph g = testing::mlp_block();
  // add2 feeds the transpose and scale: mm2 + add2 + scale is not bias-only.
  const FusionGroup grp = testing::group_of(g, "fg-x", {"mm2", "add2", "scale"}, "auto_vertical");
  const LaunchPlan p = build_launch_plan(g, {&grp});
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].status, "fused");
  EXPECT_EQ(p.groups[0].backend, "cublaslt+generated-cuda");
  EXPECT_EQ(p.groups[0].launches, 2);
  EXPECT_EQ(kind_of(g, p, "mm2"), LaunchKind::Matmul);
  EXPECT_EQ(kind_of(g, p, "add2"), LaunchKind::Generated);
  EXPECT_EQ(p.launch_of(g.find_node("add2")), p.launch_of(g.find_node("scale")));
  expect_ordered(g, p);
}

TEST(LaunchPlan, AnOpWithoutAGpuKernelIsAnErrorNamingIt) {
  GraphBuilder b;
  auto x = b.input("x", {4, 8});
  auto k = b.constant("k", TensorData::from_int64s({1}, {2}));
  b.op_multi("TopK", {x, k}, 2, {}, "topk_node");
  Graph g = b.build();
  g.add_output(g.node(g.find_node("topk_node")).outputs[0]);
  try {
    build_launch_plan(g, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no GPU kernel for op 'TopK'"), std::string::npos) << m;
    EXPECT_NE(m.find("topk_node"), std::string::npos) << m;
  }
}

TEST(LaunchPlan, StepsForTheMemoryPlanMarkViewsAsAliases) {
  const Graph g = testing::residual_cnn();
  const LaunchPlan p = build_launch_plan(g, {});
  const auto steps = p.plan_steps();
  ASSERT_EQ(steps.size(), p.launches.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    EXPECT_EQ(steps[i].aliases_input, p.launches[i].kind == LaunchKind::View);
}

}  // namespace
}  // namespace fx::cuda
