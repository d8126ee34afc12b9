// SPDX-License-Identifier: Apache-2.0
// Golden dumps of whole analyses (KDAB hotspot's tst_models.cpp style): each case
// analyses a small model on the fixed test profile and compares a text dump of the
// AnalysisResult (totals, groups with their members and estimates, pairs not fused)
// with tests/analysis/golden/<case>.txt. A change in what the finder or the cost model
// decides shows up as a diff of a few lines.
//
// After an intended change: FX_UPDATE_GOLDEN=1 ctest -R Golden, then review the diff.
// The profile is test_profile(), not cpu-host (measured), so the dumps are the same on
// every machine.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "onnx/model_loader.h"
#include "test_graphs.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

// Six significant digits: enough to see a change, few enough to read.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::string dump(const AnalysisResult& r) {
  std::ostringstream o;
  o << "device " << r.device << "\n"
    << "opt_level " << r.opt_level << "  threshold " << num(r.threshold) << "\n"
    << "kernels " << r.kernels_before << " -> " << r.kernels_after << "\n"
    << "bytes " << r.bytes_before << " -> " << r.bytes_after << "\n"
    << "time_us " << num(r.time_before_s * 1e6) << " -> " << num(r.time_after_s * 1e6) << "\n"
    << "unknown_cost_nodes " << r.unknown_cost_nodes << "\n";
  for (const auto& g : r.groups) {
    const auto& e = g.estimate;
    o << "\ngroup " << g.id << " " << g.pattern << " " << group_status_name(g.status) << "\n"
      << "  nodes " << joined(g.nodes) << "\n"
      << "  ops " << joined(g.ops) << "\n"
      << "  bytes " << e.bytes_before << " -> " << e.bytes_after << "  launches "
      << e.launches_before << " -> " << e.launches_after << "  footprint " << e.footprint_bytes
      << (e.known ? "" : "  unknown") << "\n"
      << "  time_us " << num(e.time_before_s * 1e6) << " -> " << num(e.time_after_s * 1e6)
      << "  saved " << num(e.time_saved_s() * 1e6) << " by " << e.saving_label() << "\n";
  }
  if (!r.not_fused.empty()) o << "\n";
  for (const auto& n : r.not_fused)
    o << "not_fused " << n.producer << " -> " << n.consumer << ": "
      << not_fused_reason_name(n.reason) << "\n";
  return o.str();
}

void expect_golden(const std::string& name, const AnalysisResult& r) {
  fs::path file = fs::path(FX_TEST_SOURCE_DIR) / "analysis" / "golden" / (name + ".txt");
  std::string actual = dump(r);
  if (const char* u = std::getenv("FX_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(file) << actual;
    std::printf("rewrote %s\n", file.c_str());
    return;
  }
  std::ifstream in(file);
  ASSERT_TRUE(in) << file << " is missing: run with FX_UPDATE_GOLDEN=1 to write it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(expected.str(), actual) << "analysis of " << name << " differs from " << file
                                    << " (FX_UPDATE_GOLDEN=1 rewrites it after an intended change)";
}

AnalysisResult analyze_at(const Graph& g, int level) {
  FusionOptions o;
  o.opt_level = level;
  return analyze_fusion(g, testing::test_profile(), o);
}

// `dims` binds the model's symbolic dimensions ("batch=1"), as fxc's --dim does.
AnalysisResult analyze_model(const std::string& file, int level,
                             const std::vector<std::string>& dims = {}) {
  LoadOptions lo;
  for (const auto& d : dims) parse_dim_binding(d, lo);
  LoadedModel m = load_onnx(std::string(FX_RESOURCES_DIR) + "/models/" + file, lo);
  return analyze_at(m.graph, level);
}

// A residual block: conv-bn-relu, conv-bn, add of the first relu, relu. The first relu
// feeds both the second conv and the add.
Graph residual_block() {
  using namespace testing;
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 16, 16});
  auto r1 = b.op("Relu", {batch_norm(b, conv(b, x, 8, 8, 16, "conv1"), 8, "bn1")}, {}, "relu1");
  auto n2 = batch_norm(b, conv(b, r1, 8, 8, 16, "conv2"), 8, "bn2");
  b.output(b.op("Relu", {b.op("Add", {n2, r1}, {}, "add")}, {}, "relu2"));
  return b.build();
}

TEST(Golden, TinyCnn) {
  expect_golden("tiny_cnn", analyze_model("tiny_cnn.onnx", 2));
}

TEST(Golden, TinyCnnLevelOne) {
  expect_golden("tiny_cnn_level1", analyze_model("tiny_cnn.onnx", 1));
}

TEST(Golden, TinyTransformer) {
  expect_golden("tiny_transformer",
                analyze_model("tiny_transformer.onnx", 2, {"batch=1", "seq=16"}));
}

TEST(Golden, ResidualBlock) {
  expect_golden("residual_block", analyze_at(residual_block(), 2));
}

}  // namespace
}  // namespace fx
