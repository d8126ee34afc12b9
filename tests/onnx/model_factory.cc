// SPDX-License-Identifier: Apache-2.0
#include "model_factory.h"

#include <fstream>
#include <random>

namespace fx::testing {

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("fx-test-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void add_float_io(onnx::ValueInfoProto* vi, const std::string& name,
                  const std::vector<int64_t>& dims, const std::vector<std::string>& dim_params) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  shape->clear_dim();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i < dim_params.size() && !dim_params[i].empty())
      d->set_dim_param(dim_params[i]);
    else
      d->set_dim_value(dims[i]);
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

onnx::TensorProto* add_initializer(onnx::GraphProto* g, const std::string& name,
                                   const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  std::string raw(static_cast<std::size_t>(n) * sizeof(float), '\0');
  auto* f = reinterpret_cast<float*>(raw.data());
  for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>(i);
  t->set_raw_data(raw);
  return t;
}

onnx::ModelProto relu_add_model(int64_t width) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("fx-tests");
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("relu_add");
  add_float_io(g->add_input(), "x", {1, width});
  add_float_io(g->add_output(), "y", {1, width});
  add_initializer(g, "w", {width});
  add_node(g, "Relu", "/block/relu/Relu", {"x"}, {"r"});
  add_node(g, "Add", "/block/Add", {"r", "w"}, {"y"});
  return m;
}

void save(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

}  // namespace fx::testing
