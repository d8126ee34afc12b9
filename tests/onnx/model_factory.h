// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small ONNX models built in tests with the protobuf API, written to a temp dir.

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fx::testing {

// A fresh, empty directory under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Adds a float tensor input/output ValueInfo with the given dims ("batch" style
// names allowed via dim_params: an empty string entry means use the number).
void add_float_io(onnx::ValueInfoProto* vi, const std::string& name,
                  const std::vector<int64_t>& dims, const std::vector<std::string>& dim_params = {});

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs);

// A float initializer of the given dims filled with 0, 1, 2, ... in raw_data.
onnx::TensorProto* add_initializer(onnx::GraphProto* g, const std::string& name,
                                   const std::vector<int64_t>& dims);

// x[1,4] -> Relu -> Add(w[4]) -> y. Opset 13, IR 8.
onnx::ModelProto relu_add_model(int64_t width = 4);

void save(const onnx::ModelProto& m, const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

}  // namespace fx::testing
