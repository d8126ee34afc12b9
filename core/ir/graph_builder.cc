// SPDX-License-Identifier: Apache-2.0
#include "ir/graph_builder.h"

namespace fx {

ValueId GraphBuilder::input(const std::string& name, const std::vector<int64_t>& dims,
                            DType dtype) {
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = Shape::of(dims);
  ValueId id = g_.add_value(std::move(v));
  g_.add_input(id);
  return id;
}

ValueId GraphBuilder::constant(const std::string& name, std::shared_ptr<TensorData> data) {
  Value v;
  v.name = name;
  v.dtype = data->dtype();
  v.shape = Shape::of(data->dims());
  v.data = std::move(data);
  return g_.add_value(std::move(v));
}

ValueId GraphBuilder::op(const std::string& op_type, const std::vector<ValueId>& inputs,
                         const AttrList& attrs, const std::string& name, const Shape& out_shape,
                         DType out_dtype) {
  auto outs = op_multi(op_type, inputs, 1, attrs, name);
  Value& v = g_.value(outs[0]);
  if (out_shape.rank_known()) v.shape = out_shape;
  if (out_dtype != DType::Undefined) v.dtype = out_dtype;
  return outs[0];
}

std::vector<ValueId> GraphBuilder::op_multi(const std::string& op_type,
                                            const std::vector<ValueId>& inputs, int num_outputs,
                                            const AttrList& attrs, const std::string& name) {
  Node n;
  n.op_type = op_type;
  n.name = name.empty() ? op_type + "_" + std::to_string(g_.node_count()) : name;
  n.inputs = inputs;
  for (const auto& [k, v] : attrs) n.attrs.set(k, v);
  for (int i = 0; i < num_outputs; ++i) {
    Value v;
    v.name = n.name + ":" + std::to_string(i);
    // Infer a dtype default from the first input so simple chains stay typed.
    if (!inputs.empty() && inputs[0] != kNoValue) {
      v.dtype = g_.value(inputs[0]).dtype;
      v.shape = g_.value(inputs[0]).shape;
    }
    n.outputs.push_back(g_.add_value(std::move(v)));
  }
  g_.add_node(std::move(n));
  return g_.node(static_cast<NodeId>(g_.node_count() - 1)).outputs;
}

}  // namespace fx
