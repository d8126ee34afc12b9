// SPDX-License-Identifier: Apache-2.0
// fxc codegen --bench --json end to end on tiny_cnn: the interleaved, alone and cold
// figures are all there, cold runs only when asked for by a non-zero --evict-mb, and
// fused outputs agree with unfused. (Timings themselves are not asserted: the machine
// is shared.) Both programs follow the model's opset (Softmax before opset 13).

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "onnx/tensor_file.h"
#include "support/cli_runner.h"

namespace fx {
namespace {

using testing::run_fxc;

const std::string kModel = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";

nlohmann::json bench(const std::string& evict_mb, const std::string& opt_level = "2") {
  auto r = run_fxc({"-q", "codegen", kModel, "--opt-level", opt_level, "--threshold", "0",
                    "--bench", "3", "--threads", "1", "--json", "--evict-mb", evict_mb});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(CodegenBenchCli, TimesTheFusedProgramInterleavedAloneAndCold) {
  auto j = bench("1");
  EXPECT_EQ(j["runs"], 3);
  EXPECT_TRUE(j["equivalent"].get<bool>());
  for (const char* k : {"unfused", "fused", "fused_alone", "fused_cold"}) {
    SCOPED_TRACE(k);
    EXPECT_GT(j[k]["median_ms"].get<double>(), 0.0);
    EXPECT_LE(j[k]["min_ms"].get<double>(), j[k]["median_ms"].get<double>());
  }
  EXPECT_DOUBLE_EQ(j["fused_cold"]["evict_mb"].get<double>(), 1.0);
  EXPECT_TRUE(j["warmup_choice"]["fell_back"].is_array());
}

// A fused kernel made slower on purpose (FXC_TEST_BREAK_GROUP=#0:slow: it runs right,
// then waits 5 ms) is timed against its members at warm-up and falls back to them: the
// JSON names it with the reason, the program no longer runs it, outputs still agree.
TEST(CodegenBenchCli, AGroupMeasuredSlowerAtWarmUpFallsBack) {
  ::setenv("FXC_TEST_BREAK_GROUP", "#0:slow", 1);
  auto r = run_fxc({"-q", "codegen", kModel, "--opt-level", "2", "--threshold", "0", "--bench", "2",
                    "--threads", "1", "--json", "--interleaved-only"});
  ::unsetenv("FXC_TEST_BREAK_GROUP");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["equivalent"].get<bool>());
  const auto& c = j["warmup_choice"];
  EXPECT_GE(c["timed"].get<int>(), 1);
  ASSERT_GE(c["fell_back"].size(), 1u) << c.dump();
  const auto& f = c["fell_back"][0];
  EXPECT_GT(f["fused_us"].get<double>(), f["unfused_us"].get<double>() + 4000) << f.dump();
  EXPECT_NE(f["reason"].get<std::string>().find("fell back at warm-up"), std::string::npos);
  EXPECT_GE(j["outcomes"]["excluded"].get<int>(), 1);
  // The slow kernel is gone: the fused program is not 5 ms a run slower than unfused.
  EXPECT_LT(j["fused"]["median_ms"].get<double>(), j["unfused"]["median_ms"].get<double>() + 4.0);
}

TEST(CodegenBenchCli, EvictZeroLeavesTheColdRunsOut) {
  auto j = bench("0");
  EXPECT_DOUBLE_EQ(j["fused_cold"]["median_ms"].get<double>(), 0.0);
  EXPECT_GT(j["fused_alone"]["median_ms"].get<double>(), 0.0);
}

// x[2,3,4] -> Softmax(axis 1) -> y at opset 11, where Softmax flattens the input to
// [2, 12] and normalizes each of the 2 rows (opset 13 normalizes along axis 1 only).
void write_legacy_softmax(const std::filesystem::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  for (auto [vi, name] : {std::pair{g->add_input(), "x"}, std::pair{g->add_output(), "y"}}) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {2, 3, 4}) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  auto* n = g->add_node();
  n->set_op_type("Softmax");
  n->add_input("x");
  n->add_output("y");
  auto* axis = n->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  std::ofstream(dir / "softmax11.onnx", std::ios::binary) << m.SerializeAsString();
  onnx::TensorProto x;
  x.set_name("x");
  x.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 3, 4}) x.add_dims(d);
  for (int i = 0; i < 24; ++i) x.add_float_data(0.1f * static_cast<float>(i % 7));
  std::filesystem::create_directories(dir / "in");
  std::ofstream(dir / "in" / "input_0.pb", std::ios::binary) << x.SerializeAsString();
}

TEST(CodegenBenchCli, RunsTheModelAtItsOwnOpset) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("fx_codegen_opset_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_legacy_softmax(dir);
  auto r = run_fxc({"-q", "codegen", (dir / "softmax11.onnx").string(), "--opt-level", "2",
                    "--bench", "1", "--threads", "1", "--inputs", (dir / "in").string(),
                    "--outputs", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<float> y =
      read_tensor_file((dir / "out" / "output_0.pb").string())->to_floats();
  ASSERT_EQ(y.size(), 24u);
  // Each batch's 12 values sum to 1 (opset 11); at opset 13 each sums to 4.
  for (int b = 0; b < 2; ++b) {
    float sum = 0;
    for (int i = 0; i < 12; ++i) sum += y[static_cast<std::size_t>(b * 12 + i)];
    EXPECT_NEAR(sum, 1.0f, 1e-5f) << "batch " << b;
  }
  std::filesystem::remove_all(dir);
}

// Without a group or a relayout the fused program is the unfused one, and the JSON says
// so, so that a benchmark does not read the noise between two identical programs as the
// plan's loss. tiny_cnn's plan changes kernels (groups, channels-last convs): not the same.
TEST(CodegenBenchCli, SaysWhenTheFusedProgramIsTheUnfusedOne) {
  auto fused = bench("0");
  EXPECT_GT(fused["groups"].get<int>(), 0);
  EXPECT_FALSE(fused["same_program"].get<bool>());
  const auto dir =
      std::filesystem::temp_directory_path() / ("fx_codegen_same_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_legacy_softmax(dir);
  auto r = run_fxc({"-q", "codegen", (dir / "softmax11.onnx").string(), "--opt-level", "2",
                    "--bench", "1", "--threads", "1", "--json", "--evict-mb", "0", "--inputs",
                    (dir / "in").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto none = nlohmann::json::parse(r.out);
  EXPECT_EQ(none["groups"].get<int>(), 0);
  EXPECT_TRUE(none["same_program"].get<bool>());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fx
