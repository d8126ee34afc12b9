// SPDX-License-Identifier: Apache-2.0
// The sample models, fused at opt level 2 (every candidate accepted), run with the
// same outputs as unfused; their fused export passes the ONNX checker, has the
// expected node count and, with its functions inlined, loads and runs in our runtime.

#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "codegen/kernel_ir.h"
#include "codegen_test_util.h"
#include "device/device_presets.h"
#include "onnx/fused_model_export.h"
#include "onnx/model_loader.h"

namespace fx {
namespace {

LoadedModel load_sample(const std::string& name) {
  LoadOptions lo;
  lo.dims = {{"batch", 2}, {"seq", 8}};
  return load_onnx(std::string(FX_RESOURCES_DIR) + "/models/" + name, lo);
}

FusionPlan plan_for(const Graph& g) {
  FusionOptions fo;
  fo.opt_level = 2;
  FusionPlan plan(analyze_fusion(g, preset_nvidia_h100(), fo));
  plan.accept_all_above(0.0);
  return plan;
}

class ModelFusion : public ::testing::TestWithParam<const char*> {};

TEST_P(ModelFusion, FusedProgramMatchesUnfused) {
  LoadedModel m = load_sample(GetParam());
  FusionPlan plan = plan_for(m.graph);
  ASSERT_FALSE(plan.accepted().empty());
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("models");
  opt.stem = std::string(GetParam()).substr(0, std::string(GetParam()).find('.'));
  FusedProgram p = build_fused_program(m.graph, plan, opt);
  EXPECT_TRUE(p.note.empty()) << p.note;
  int fused = p.count(GroupOutcome::Compiled) + p.count(GroupOutcome::DnnlPostOps);
  EXPECT_GT(fused, 0);
  for (const auto& gb : p.groups) {
    std::cout << "  " << gb.id << " " << group_outcome_name(gb.outcome) << ": " << gb.detail
              << "\n";
  }
  for (const auto& gb : p.groups) {
    if (gb.outcome != GroupOutcome::Excluded) continue;
    EXPECT_FALSE(gb.step) << gb.id;
    EXPECT_NE(gb.detail.find("no generated code"), std::string::npos) << gb.id << ": " << gb.detail;
  }
  EXPECT_LT(p.steps.size(), m.graph.node_count());
  auto in = testing::seeded_inputs(m.graph, 3);
  auto expected = Executor(m.graph).run(in);
  auto actual = Executor(m.graph, p.steps).run(in);
  auto d = testing::compare(expected, actual);
  EXPECT_LT(d.max_abs, 1e-4) << "max rel " << d.max_rel;
}

// The same groups as CUDA: one entry point per generated group (and generated part),
// and the translation unit compiles with nvcc (skipped by name without nvcc).
TEST_P(ModelFusion, CudaSourceOfEveryGeneratedGroupCompilesWithNvcc) {
  LoadedModel m = load_sample(GetParam());
  FusionPlan plan = plan_for(m.graph);
  CodegenOptions opt;
  opt.compile = false;
  opt.emit_cuda = true;
  FusedProgram p = build_fused_program(m.graph, plan, opt);
  int generated = 0;
  for (const auto& gb : p.groups) {
    if (gb.detail.find("compilation disabled") == std::string::npos) continue;
    ++generated;
    EXPECT_NE(p.cuda_source.find(c_identifier(gb.id) + "_cuda("), std::string::npos) << gb.id;
  }
  if (generated == 0) GTEST_SKIP() << "no generated group in " << GetParam();
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) GTEST_SKIP() << "nvcc not found";
  std::string dir = testing::test_cache_dir("cuda-models");
  std::string cu = dir + "/" + GetParam() + ".cu", log = cu + ".log";
  std::ofstream(cu) << p.cuda_source;
  std::string cmd = std::string(nvcc) + " -O3 -std=c++17 -Xcompiler -fPIC -c -o " + cu + ".o " +
                    cu + " > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream lf(log);
  std::string out((std::istreambuf_iterator<char>(lf)), {});
  EXPECT_EQ(rc, 0) << out;
}

TEST_P(ModelFusion, ExportPassesCheckerAndRunsInlined) {
  LoadedModel m = load_sample(GetParam());
  FusionPlan plan = plan_for(m.graph);
  std::vector<ExportGroup> groups;
  std::size_t grouped = 0;
  for (const FusionGroup* g : plan.accepted()) {
    groups.push_back({g->id, g->nodes});
    grouped += g->nodes.size();
  }
  std::string out = testing::test_cache_dir("export") + "/" + GetParam();
  FusedExportResult r = export_fused_model(m, groups, out);
  EXPECT_EQ(r.functions, static_cast<int>(groups.size()));
  EXPECT_TRUE(r.skipped.empty());
  // Grouped nodes (BNs folded away included) leave; one call per group comes in.
  EXPECT_EQ(r.nodes_after, r.nodes_before - static_cast<int>(grouped) + r.functions);
  onnx::ModelProto proto;
  {
    std::ifstream f(out, std::ios::binary);
    ASSERT_TRUE(proto.ParseFromIstream(&f));
  }
  EXPECT_GE(proto.ir_version(), 8);
  EXPECT_EQ(proto.functions_size(), r.functions);
  EXPECT_NO_THROW(onnx::checker::check_model(proto));
  if (std::string(GetParam()) == "tiny_cnn.onnx") {
    EXPECT_FALSE(r.folded_bn.empty());
  }
  // Inlined back, our importer loads and runs it with the original's outputs.
  EXPECT_EQ(inline_local_functions(proto), r.functions);
  std::string inlined = out + ".inlined.onnx";
  {
    std::ofstream f(inlined, std::ios::binary);
    ASSERT_TRUE(proto.SerializeToOstream(&f));
  }
  LoadOptions lo;
  lo.dims = {{"batch", 2}, {"seq", 8}};
  LoadedModel back = load_onnx(inlined, lo);
  EXPECT_EQ(back.graph.node_count(), m.graph.node_count() - r.folded_bn.size());
  auto in = testing::seeded_inputs(m.graph, 5);
  auto d = testing::compare(Executor(m.graph).run(in), Executor(back.graph).run(in));
  EXPECT_LT(d.max_abs, 1e-4) << "max rel " << d.max_rel;
}

INSTANTIATE_TEST_SUITE_P(Samples, ModelFusion,
                         ::testing::Values("tiny_cnn.onnx", "tiny_transformer.onnx"),
                         [](const auto& info) {
                           std::string s = info.param;
                           return s.substr(0, s.find('.'));
                         });

}  // namespace
}  // namespace fx
