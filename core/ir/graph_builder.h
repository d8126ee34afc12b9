// SPDX-License-Identifier: Apache-2.0
#pragma once
// A terse way to build graphs in tests, benchmarks and rewrites:
//
//   GraphBuilder b;
//   auto x = b.input("x", {1, 3, 8, 8});
//   auto w = b.constant("w", TensorData::from_floats({4, 3, 3, 3}, weights));
//   auto y = b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
//   b.output(b.op("Relu", {y}));
//   Graph g = b.build();
//
// Output shapes are not inferred here; pass them with op(..., shape) when a test
// needs them, or run the ONNX importer on a serialized model.

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace fx {

class GraphBuilder {
 public:
  using AttrList = std::vector<std::pair<std::string, AttributeValue>>;

  ValueId input(const std::string& name, const std::vector<int64_t>& dims,
                DType dtype = DType::Float32);
  ValueId constant(const std::string& name, std::shared_ptr<TensorData> data);
  // Adds a node with one output; returns that output. The node is named `name`
  // (or "<op>_<index>") and its output "<node name>:0". The output takes the
  // first input's shape and dtype unless out_shape / out_dtype say otherwise.
  ValueId op(const std::string& op_type, const std::vector<ValueId>& inputs,
             const AttrList& attrs = {}, const std::string& name = {}, const Shape& out_shape = {},
             DType out_dtype = DType::Undefined);
  // Adds a node with several outputs.
  std::vector<ValueId> op_multi(const std::string& op_type, const std::vector<ValueId>& inputs,
                                int num_outputs, const AttrList& attrs = {},
                                const std::string& name = {});
  void output(ValueId v) { g_.add_output(v); }
  Graph& graph() { return g_; }
  Graph build() { return std::move(g_); }

 private:
  Graph g_;
};

}  // namespace fx
