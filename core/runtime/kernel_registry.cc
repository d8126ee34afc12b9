// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernel_registry.h"

#include "util/error.h"

namespace fx {

const Tensor& KernelContext::in(int i) const {
  const Tensor* t = input(i);
  if (!t) throw Error("input " + std::to_string(i) + " is required");
  return *t;
}

namespace {
const KernelTable& table() {
  static const KernelTable t = [] {
    KernelTable k;
    register_elementwise_kernels(k);
    register_elementwise_more_kernels(k);
    register_dnnl_kernels(k);
    register_shape_kernels(k);
    register_data_kernels(k);
    register_reduce_kernels(k);
    register_norm_kernels(k);
    register_pool_kernels(k);
    register_resize_kernels(k);
    register_pad_kernels(k);
    register_index_kernels(k);
    register_deconv_kernels(k);
    register_control_flow_kernels(k);
    return k;
  }();
  return t;
}
}  // namespace

bool is_supported_op(const std::string& domain, const std::string& op_type) {
  return (domain.empty() || domain == "ai.onnx") && table().count(op_type) != 0;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, f] : table()) {
    if (name.find('@') == std::string::npos) out.push_back(name);
  }
  return out;
}

std::shared_ptr<Kernel> make_kernel(const Graph& graph, const Node& node, int64_t opset) {
  if (!is_supported_op(node.domain, node.op_type)) {
    throw Error("unsupported op " + node.qualified_op() + " (node '" + node.name + "')");
  }
  std::string key = node.op_type;
  if ((key == "Softmax" || key == "LogSoftmax" || key == "Hardmax") && opset > 0 && opset < 13) {
    key += kLegacyOpsetSuffix;
  }
  try {
    return table().at(key)(graph, node);
  } catch (const Error& e) {
    throw Error(node.op_type + " node '" + node.name + "': " + e.what());
  }
}

}  // namespace fx
