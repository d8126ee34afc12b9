// SPDX-License-Identifier: Apache-2.0
// Runs the built fxc on a small model serialized here: analyze --json keys, --plan-out,
// why, bench-synthetic and the exit code on a bad file.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using fx::testing::run_fxc;

void io(onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

void init(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, float v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (auto d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) t->add_float_data(v);
}

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                      std::vector<std::string> in, std::string out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

// x[1,4,8,8] -> Conv -> BatchNormalization -> Relu -> y. The tests keep the BN
// (--disable-pass conv-bn-folding, kKeepBn): the conv_bn_act group is what they read.
std::string write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("conv_bn_relu");
  io(g->add_input(), "x", {1, 4, 8, 8});
  io(g->add_output(), "y", {1, 4, 8, 8});
  init(g, "w", {4, 4, 3, 3}, 0.1f);
  for (const char* p : {"s", "b", "m"}) init(g, p, {4}, 0.f);
  init(g, "v", {4}, 1.f);
  auto* c = node(g, "Conv", "conv", {"x", "w"}, "c");
  auto* pads = c->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  node(g, "BatchNormalization", "bn", {"c", "s", "b", "m", "v"}, "n");
  node(g, "Relu", "relu", {"n"}, "y");
  std::string path = (dir / "conv_bn_relu.onnx").string();
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

const char* const kKeepBn[] = {"--disable-pass", "conv-bn-folding"};

// x[1,4,seq] -> Mul(0.125) -> Softmax(last axis) -> Relu -> y, seq symbolic.
std::string write_softmax_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("scaled_softmax");
  for (auto* vi : {g->add_input(), g->add_output()}) {
    io(vi, vi == &g->input(0) ? "x" : "y", {1, 4});
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("seq");
  }
  init(g, "scale", {}, 0.125f);
  node(g, "Mul", "mul", {"x", "scale"}, "m");
  auto* sm = node(g, "Softmax", "softmax", {"m"}, "s");
  auto* axis = sm->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-1);
  node(g, "Relu", "relu", {"s"}, "y");
  std::string path = (dir / "scaled_softmax.onnx").string();
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

class FxcAnalyze : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fxc_analyze_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = write_model(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string model_;
};

TEST_F(FxcAnalyze, JsonHasTheDocumentedKeys) {
  std::string plan = (dir_ / "plan.json").string();
  auto r = run_fxc({"analyze", model_, "--device", "nvidia-h100", "--opt-level", "1", "--json",
                    "--plan-out", plan, kKeepBn[0], kKeepBn[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"device", "opt_level", "kernels_before", "kernels_after", "bytes_before",
                        "bytes_after", "groups", "not_fused", "analysis_ms"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["device"], "nvidia-h100");
  EXPECT_EQ(j["opt_level"], 1);
  EXPECT_EQ(j["kernels_before"], 3);
  EXPECT_EQ(j["kernels_after"], 1);
  ASSERT_EQ(j["groups"].size(), 1u);
  const auto& g = j["groups"][0];
  for (const char* k : {"id", "nodes", "ops", "bytes_saved", "launches_saved", "est_time_saved_us"})
    EXPECT_TRUE(g.contains(k)) << k;
  EXPECT_EQ(g["nodes"], nlohmann::json({"conv", "bn", "relu"}));
  EXPECT_EQ(g["launches_saved"], 2);
  EXPECT_EQ(g["bytes_saved"], 4 * 1 * 4 * 8 * 8 * 4);  // two intermediates, written + read
  EXPECT_GT(g["est_time_saved_us"].get<double>(), 0);
  std::ifstream pf(plan);
  auto pj = nlohmann::json::parse(pf);
  EXPECT_EQ(pj["schema_version"], 1);
  EXPECT_EQ(pj["groups"][0]["id"], g["id"]);
}

// A plan made with BN kept records it, and a command given that plan reads the model the
// same way: the plan's BN node is found and its group kept (it was dropped before).
TEST_F(FxcAnalyze, PlanCarriesItsDisabledPassesToTheCommandsThatReadIt) {
  std::string plan = (dir_ / "plan_bn.json").string();
  auto a = run_fxc({"analyze", model_, "--opt-level", "1", "--accept-all", "--plan-out", plan,
                    kKeepBn[0], kKeepBn[1]});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  std::ifstream pf(plan);
  auto pj = nlohmann::json::parse(pf);
  EXPECT_EQ(pj["disabled_passes"], nlohmann::json({"conv-bn-folding"}));
  ASSERT_EQ(pj["groups"][0]["nodes"], nlohmann::json({"conv", "bn", "relu"}));

  auto c = run_fxc({"codegen", model_, "--plan", plan});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find("reading it the same way"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("is not in the model"), std::string::npos) << c.err;

  // --enable-pass wins: BN folded, the plan's bn node is missing and reported.
  auto e = run_fxc({"codegen", model_, "--plan", plan, "--enable-pass", "conv-bn-folding"});
  EXPECT_NE(e.err.find("'bn' is not in the model"), std::string::npos) << e.err;
}

// --plan: the plan's accepted groups estimated on --device, as the plan groups them (a
// plan measured with another profile), not what the search would propose there.
TEST_F(FxcAnalyze, PlanEstimatesThePlansAcceptedGroupsInsteadOfSearching) {
  const std::string model = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";
  std::string plan = (dir_ / "plan_fixed.json").string();
  auto a = run_fxc({"analyze", model, "--accept-all", "--plan-out", plan});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  nlohmann::json pj = nlohmann::json::parse(std::ifstream(plan));
  nlohmann::json group;
  for (const auto& g : pj["groups"])
    if (g["nodes"].size() == 3 && g["nodes"][1] == "/layer1/0/Add") group = g;
  ASSERT_FALSE(group.is_null()) << "the search fuses conv2, Add and Relu of layer1";
  group["nodes"] = {"/layer1/0/Add", "/layer1/0/relu_1/Relu"};  // the plan keeps two
  group["pattern"] = "auto_vertical";
  pj["groups"] = nlohmann::json::array({group});
  std::ofstream(plan) << pj.dump();
  auto r = run_fxc({"analyze", model, "--plan", plan, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["groups"][0]["nodes"], group["nodes"]);
  EXPECT_EQ(j["groups"][0]["status"], "accepted");
  EXPECT_EQ(j["kernels_after"].get<int>(), j["kernels_before"].get<int>() - 1);
  // A rejected group is not the plan's: nothing is estimated.
  pj["groups"][0]["status"] = "rejected";
  std::ofstream(plan) << pj.dump();
  r = run_fxc({"analyze", model, "--plan", plan, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["groups"].empty());
  // A plan that cannot be read: a clear error naming it, no crash.
  std::ofstream(plan) << "{ not json";
  r = run_fxc({"analyze", model, "--plan", plan});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("plan_fixed.json"), std::string::npos) << r.err;
}

TEST_F(FxcAnalyze, TableNamesDeviceAndSource) {
  auto r = run_fxc({"analyze", model_, "--device", "ascend-910b", kKeepBn[0], kKeepBn[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ascend-910b (public figures, unverified)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("conv_bn_act"), std::string::npos) << r.out;
}

TEST_F(FxcAnalyze, WhyExplainsAPair) {
  auto r = run_fxc({"why", model_, "conv", "bn", "--device", "nvidia-h100", "--opt-level", "0",
                    kKeepBn[0], kKeepBn[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opt_level"), std::string::npos) << r.out;
  r = run_fxc(
      {"analyze", model_, "--device", "nvidia-h100", "--why", "conv,bn", kKeepBn[0], kKeepBn[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fused together"), std::string::npos) << r.out;
  EXPECT_EQ(run_fxc({"why", model_, "conv", "nosuchnode", "--device", "nvidia-h100"}).exit_code, 2);
}

// By default the BN is folded into the Conv: one Conv + Relu group, and the JSON says
// what was folded.
TEST_F(FxcAnalyze, BatchNormIsFoldedByDefault) {
  auto r = run_fxc({"analyze", model_, "--device", "nvidia-h100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernels_before"], 2);
  ASSERT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["groups"][0]["nodes"], nlohmann::json({"conv", "relu"}));
  EXPECT_NE(j["canonical"]["summary"].get<std::string>().find("1 BatchNormalization folded"),
            std::string::npos);
}

// The Softmax row grows with the assumed seq: on a chip whose capacity lies between the
// group's footprint at seq=128 (assumed) and at the probe seq=2048, the group is legal
// only at the assumed value, and the JSON and the table say so.
TEST_F(FxcAnalyze, AGroupLegalOnlyAtAnAssumedDimSaysSo) {
  const std::string model = write_softmax_model(dir_);
  auto footprint = [&](const std::string& seq) {
    auto r = run_fxc({"analyze", model, "--device", "nvidia-h100", "--json", "--threshold", "0",
                      "--dim", "seq=" + seq});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["groups"].size(), 1u) << r.out;
    EXPECT_FALSE(j["groups"][0].contains("assumed_note"));  // bound, not assumed
    return j["groups"][0]["footprint_bytes"].get<double>();
  };
  const double fits = footprint("128"), too_big = footprint("2048");
  ASSERT_LT(fits, too_big);
  std::ifstream in(std::string(FX_RESOURCES_DIR) + "/devices/nvidia-h100.json");
  auto dev = nlohmann::json::parse(in);
  dev["name"] = "small-chip";
  dev["onchip_capacity_bytes"] = int64_t((fits + too_big) / 2 / 0.8);
  const std::string device = (dir_ / "small_chip.json").string();
  std::ofstream(device) << dev.dump();

  auto r = run_fxc({"analyze", model, "--device", device, "--json", "--threshold", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["groups"].size(), 1u) << r.out;
  EXPECT_EQ(j["groups"][0]["assumed_note"],
            "legal for the assumed seq=128 (over on-chip capacity at seq=2048); rebind to check");
  r = run_fxc({"analyze", model, "--device", device, "--threshold", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: legal for the assumed seq=128"), std::string::npos) << r.out;
  // The plan carries it too (the explorer shows a loaded plan's notes).
  const std::string plan = (dir_ / "softmax_plan.json").string();
  r = run_fxc({"analyze", model, "--device", device, "--threshold", "0", "--plan-out", plan});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream saved(plan);
  const auto pj = nlohmann::json::parse(saved);
  EXPECT_EQ(pj["groups"][0].value("assumed_note", ""),
            "legal for the assumed seq=128 (over on-chip capacity at seq=2048); rebind to check");
}

TEST_F(FxcAnalyze, BadInputsExitWithTwo) {
  EXPECT_EQ(
      run_fxc({"analyze", (dir_ / "missing.onnx").string(), "--device", "nvidia-h100"}).exit_code,
      2);
  EXPECT_EQ(run_fxc({"analyze", model_, "--device", "no-such-device"}).exit_code, 2);
  EXPECT_EQ(run_fxc({"analyze", model_, "--opt-level", "9"}).exit_code, 2);
}

TEST_F(FxcAnalyze, BenchSyntheticReportsTiming) {
  auto r = run_fxc({"bench-synthetic", "--nodes", "2000", "--device", "nvidia-h100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["nodes"].get<int>(), 2000);
  EXPECT_GT(j["groups"].get<int>(), 0);
  EXPECT_LT(j["kernels_after"].get<int>(), j["kernels_before"].get<int>());
}

}  // namespace
