// SPDX-License-Identifier: Apache-2.0
// Bad input never crashes the importer: each case gives one FileError naming the
// file and the cause.

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <optional>
#include <random>

#include "model_factory.h"
#include "onnx/model_loader.h"
#include "util/error.h"

namespace fx {
namespace {

using testing::TempDir;

// Loads `path`, expects a FileError whose message names the file and contains `cause`.
void expect_refused(const std::string& path, const std::string& cause) {
  try {
    load_onnx(path);
    FAIL() << path << " was accepted";
  } catch (const FileError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(cause), std::string::npos) << "message: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  }
}

TEST(BadInput, MissingFile) {
  TempDir dir;
  expect_refused(dir.file("nope.onnx"), "no such file");
}

TEST(BadInput, EmptyFile) {
  TempDir dir;
  testing::write_bytes(dir.file("empty.onnx"), "");
  expect_refused(dir.file("empty.onnx"), "file is empty");
}

TEST(BadInput, TruncatedFile) {
  TempDir dir;
  std::string bytes = testing::relu_add_model(64).SerializeAsString();
  testing::write_bytes(dir.file("cut.onnx"), bytes.substr(0, bytes.size() * 2 / 3));
  expect_refused(dir.file("cut.onnx"), "not a valid ONNX model");
}

TEST(BadInput, RandomBytes) {
  TempDir dir;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::string bytes(4096, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    std::string path = dir.file("random" + std::to_string(trial) + ".onnx");
    testing::write_bytes(path, bytes);
    EXPECT_THROW(load_onnx(path), FileError) << path;
  }
}

TEST(BadInput, TextFile) {
  TempDir dir;
  testing::write_bytes(dir.file("model.onnx"), "This is a README, not a model.\nSecond line.\n");
  expect_refused(dir.file("model.onnx"), "ONNX model");
}

TEST(BadInput, Directory) {
  TempDir dir;
  expect_refused(dir.path().string(), "directory");
}

TEST(BadInput, MissingExternalDataFile) {
  TempDir dir;
  auto m = testing::relu_add_model();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  testing::save(m, dir.file("ext.onnx"));
  expect_refused(dir.file("ext.onnx"), "external data file 'weights.bin' not found");
}

TEST(BadInput, ExternalDataShorterThanDeclared) {
  TempDir dir;
  auto m = testing::relu_add_model(4);
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  testing::write_bytes(dir.file("weights.bin"), std::string(8, '\0'));  // 2 floats, not 4
  testing::save(m, dir.file("short.onnx"));
  expect_refused(dir.file("short.onnx"), "declares 4 elements");
}

TEST(BadInput, Cycle) {
  TempDir dir;
  onnx::ModelProto m = testing::relu_add_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  testing::add_node(g, "Relu", "a", {"y"}, {"r"});
  testing::add_node(g, "Add", "b", {"r", "w"}, {"y"});
  testing::save(m, dir.file("cycle.onnx"));
  expect_refused(dir.file("cycle.onnx"), "cycle");
}

TEST(BadInput, UndefinedTensor) {
  TempDir dir;
  onnx::ModelProto m = testing::relu_add_model();
  m.mutable_graph()->mutable_node(1)->set_input(0, "ghost");
  testing::save(m, dir.file("ghost.onnx"));
  expect_refused(dir.file("ghost.onnx"), "undefined tensor 'ghost'");
}

TEST(BadInput, AbsurdInitializerDims) {
  TempDir dir;
  onnx::ModelProto m = testing::relu_add_model();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  for (int i = 0; i < 4; ++i) w->add_dims(int64_t{1} << 40);
  testing::save(m, dir.file("huge.onnx"));
  expect_refused(dir.file("huge.onnx"), "overflows");
}

TEST(BadInput, NegativeInitializerDim) {
  TempDir dir;
  onnx::ModelProto m = testing::relu_add_model();
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, -3);
  testing::save(m, dir.file("neg.onnx"));
  expect_refused(dir.file("neg.onnx"), "negative dimension");
}

TEST(BadInput, AbsurdInputDimsImportWithoutAllocating) {
  // A graph input of 2^60 elements is legal to describe; import must not allocate it, so
  // it succeeds: a refusal fails this test as a crash would. w is [1] and broadcasts, so
  // the model is valid apart from its size.
  TempDir dir;
  onnx::ModelProto m = testing::relu_add_model(1);
  for (auto* io : {m.mutable_graph()->mutable_input(0), m.mutable_graph()->mutable_output(0)}) {
    auto* shape = io->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->mutable_dim(0)->set_dim_value(int64_t{1} << 30);
    shape->mutable_dim(1)->set_dim_value(int64_t{1} << 30);
  }
  testing::save(m, dir.file("wide.onnx"));
  std::optional<LoadedModel> loaded;
  try {
    loaded.emplace(load_onnx(dir.file("wide.onnx")));
  } catch (const FileError& e) {
    FAIL() << "refused: " << e.what();
  }
  ValueId x = loaded->graph.find_value("x");
  ASSERT_NE(x, kNoValue);
  EXPECT_EQ(loaded->graph.value(x).shape.static_dims(),
            (std::vector<int64_t>{int64_t{1} << 30, int64_t{1} << 30}));
  // Three tensors of 2^62 bytes: the total saturates rather than wrapping negative.
  EXPECT_EQ(loaded->graph.activation_bytes(), std::numeric_limits<int64_t>::max());
}

TEST(BadInput, NoGraph) {
  TempDir dir;
  onnx::ModelProto m;
  m.set_ir_version(8);
  testing::save(m, dir.file("nograph.onnx"));
  expect_refused(dir.file("nograph.onnx"), "no graph");
}

TEST(BadInput, DuplicateOutputs) {
  TempDir dir;
  onnx::ModelProto m = testing::relu_add_model();
  testing::add_node(m.mutable_graph(), "Neg", "again", {"x"}, {"r"});
  testing::save(m, dir.file("dup.onnx"));
  expect_refused(dir.file("dup.onnx"), "produced twice");
}

TEST(BadInput, BadDimBinding) {
  LoadOptions o;
  EXPECT_THROW(parse_dim_binding("batch", o), Error);
  EXPECT_THROW(parse_dim_binding("batch=-1", o), Error);
  EXPECT_THROW(parse_dim_binding("batch=x", o), Error);
  parse_dim_binding("batch=8", o);
  EXPECT_EQ(o.dims.at("batch"), 8);
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// Inputs that the libFuzzer target (tests/fuzz) found crashing; each must now be a
// clean FileError.
TEST(BadInput, FuzzerRegressions) {
  namespace fs = std::filesystem;
  int seen = 0;
  for (const auto& e :
       fs::directory_iterator(std::string(FX_TEST_DATA_DIR) + "/fuzz_regressions")) {
    ++seen;
    EXPECT_THROW(load_onnx(e.path().string()), FileError) << e.path();
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace fx
