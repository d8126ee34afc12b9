// SPDX-License-Identifier: Apache-2.0
// fxc inspect end to end: the JSON contract and the bad-input contract (one line
// naming the file and the cause, exit code 2).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace fx {
namespace {

using testing::run_fxc;

const std::string kConv =
    "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx";

TEST(InspectCli, JsonHasTheDocumentedKeys) {
  auto r = run_fxc({"inspect", kConv, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"], 1);
  EXPECT_EQ(j["ops"]["Conv"], 1);
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::parse("[1,1,7,5]"));
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::parse("[1,1,4,3]"));
  EXPECT_TRUE(j["parameter_bytes"].is_number_integer());
  EXPECT_TRUE(j["load_ms"].is_number());
}

TEST(InspectCli, TextReportListsHistogramAndIo) {
  auto r = run_fxc({"inspect", kConv});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Op histogram"), std::string::npos);
  EXPECT_NE(r.out.find("[1,1,4,3]"), std::string::npos);
}

// tiny_cnn keeps its BatchNormalizations: the canonical form folds them into their
// Convs, and inspect names each (text and JSON); disabled by name, nothing is folded.
TEST(InspectCli, SaysWhichBatchNormWasFoldedIntoWhichConv) {
  const std::string model = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";
  auto r = run_fxc({"inspect", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Folded       /bn1/BatchNormalization into /conv1/Conv (conv-bn-folding)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("BatchNormalization folded into Conv"), std::string::npos) << r.out;
  r = run_fxc({"inspect", model, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool found = false;
  const auto doc = nlohmann::json::parse(r.out);  // named: the loop reads into it
  for (const auto& p : doc["canonical"]["passes"])
    if (p["name"] == "conv-bn-folding") {
      found = true;
      EXPECT_EQ(p["folded_into"]["/bn1/BatchNormalization"], "/conv1/Conv");
      EXPECT_EQ(p["nodes_removed"], p["folded_into"].size());
    }
  EXPECT_TRUE(found);
  r = run_fxc({"inspect", model, "--disable-pass", "conv-bn-folding"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("Folded "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("disabled: conv-bn-folding"), std::string::npos) << r.out;
}

TEST(InspectCli, BadFileIsOneLineAndExitTwo) {
  auto tmp = std::filesystem::temp_directory_path() / "fx-e2e-garbage.onnx";
  std::ofstream(tmp) << "definitely not protobuf \x01\x02\x03";
  auto r = run_fxc({"inspect", tmp.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // exactly one line
  EXPECT_NE(r.err.find(tmp.string()), std::string::npos) << r.err;
  std::filesystem::remove(tmp);
}

TEST(InspectCli, MissingFileAndBadDim) {
  auto r = run_fxc({"inspect", "/nonexistent/model.onnx"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/model.onnx: no such file"), std::string::npos) << r.err;
  r = run_fxc({"inspect", kConv, "--dim", "batch"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NAME=N"), std::string::npos) << r.err;
}

TEST(InspectCli, VersionFlag) {
  auto r = run_fxc({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fxc (Fusion Explorer) "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fx
