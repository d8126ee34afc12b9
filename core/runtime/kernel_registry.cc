// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernel_registry.h"

#include <set>

#include "runtime/half.h"
#include "runtime/half_adapter.h"
#include "runtime/string_adapter.h"
#include "util/error.h"

namespace fx {

const Tensor& KernelContext::in(int i) const {
  const Tensor* t = input(i);
  if (!t) throw Error("input " + std::to_string(i) + " is required");
  return *t;
}

namespace {

// Each register function with the family name the docs use for its ops; reference
// families are plain loops kept for coverage (no corpus model needs their speed).
struct Registration {
  const char* family;
  void (*fn)(KernelTable&);
  bool reference_speed;
};
constexpr Registration kRegistrations[] = {
    {"elementwise", register_elementwise_kernels, false},
    {"elementwise", register_elementwise_more_kernels, false},
    {"oneDNN", register_dnnl_kernels, false},
    {"shape", register_shape_kernels, false},
    {"data", register_data_kernels, false},
    {"reduce", register_reduce_kernels, false},
    {"normalization", register_norm_kernels, false},
    {"pooling", register_pool_kernels, false},
    {"resize", register_resize_kernels, false},
    {"pad", register_pad_kernels, false},
    {"index", register_index_kernels, false},
    {"deconvolution", register_deconv_kernels, false},
    {"recurrent", register_recurrent_kernels, false},
    {"detection", register_detection_kernels, false},
    {"scatter/gather", register_scatter_gather_kernels, false},
    {"layout", register_layout_kernels, false},
    {"quantization", register_quant_kernels, false},
    {"control flow", register_control_flow_kernels, false},
    {"math", register_math_kernels, true},
    {"signal", register_signal_kernels, true},
    {"sampling", register_sampling_kernels, true},
    {"random", register_random_kernels, true},
    {"string", register_string_kernels, true},
    {"einsum", register_einsum_kernels, true},
};

struct Registry {
  KernelTable table;
  std::vector<KernelFamily> families;
};

const Registry& registry() {
  static const Registry r = [] {
    Registry out;
    for (const Registration& reg : kRegistrations) {
      // Each function sees the table so far: a later registration may wrap an earlier
      // kernel (control flow's Identity over sequences) or replace it. The family lists
      // the names it added.
      std::set<std::string> before;
      for (const auto& [name, factory] : out.table) before.insert(name);
      reg.fn(out.table);
      KernelFamily* fam = nullptr;
      for (auto& f : out.families)
        if (f.name == reg.family) fam = &f;
      if (!fam) fam = &out.families.emplace_back(KernelFamily{reg.family, reg.reference_speed, {}});
      for (const auto& [name, factory] : out.table)
        if (!before.count(name) && name.find('@') == std::string::npos) fam->ops.push_back(name);
    }
    return out;
  }();
  return r;
}

const KernelTable& table() {
  return registry().table;
}

// Whether a value of the node may be float16/bfloat16 (declared so, or undeclared).
bool touches_half(const Graph& g, const Node& n) {
  auto maybe_half = [&](ValueId v) {
    if (v == kNoValue) return false;
    // Sequences and optionals pass through their kernels boxed (boxed_value.h): never widened.
    if (g.value(v).kind != ValueKind::Tensor) return false;
    DType d = g.value(v).dtype;
    return d == DType::Undefined || dtype_is_half(d);
  };
  for (ValueId v : n.inputs)
    if (maybe_half(v)) return true;
  for (ValueId v : n.outputs)
    if (maybe_half(v)) return true;
  return n.op_type == "Cast" && dtype_is_half(static_cast<DType>(n.attrs.get_int("to", 0)));
}

// The output dtypes the graph declares (Cast's from its `to`).
std::vector<DType> declared_outputs(const Graph& g, const Node& n) {
  std::vector<DType> out;
  for (ValueId v : n.outputs) out.push_back(v == kNoValue ? DType::Undefined : g.value(v).dtype);
  if (n.op_type == "Cast" && !out.empty()) out[0] = static_cast<DType>(n.attrs.get_int("to", 0));
  return out;
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

std::vector<KernelFamily> kernel_families() {
  return registry().families;
}

std::shared_ptr<Kernel> make_kernel(const Graph& graph, const Node& node, int64_t opset) {
  if (!is_supported_op(node.domain, node.op_type)) {
    throw Error("unsupported op " + node.qualified_op() + " (node '" + node.name + "')");
  }
  std::string key = node.op_type;
  if ((key == "Softmax" || key == "LogSoftmax" || key == "Hardmax") && opset > 0 && opset < 13) {
    key += kLegacyOpsetSuffix;
  }
  if (key == "RoiAlign" && opset > 0 && opset < 16) key += kLegacyOpsetSuffix;
  if (key == "PRelu" && opset > 0 && opset < 7) key += kLegacyOpsetSuffix;
  bool maybe_strings = false;  // an input declared string, or of undeclared type
  for (ValueId v : node.inputs) {
    if (v == kNoValue || graph.value(v).kind != ValueKind::Tensor) continue;
    const DType d = graph.value(v).dtype;
    if (d == DType::String && !takes_strings(node.op_type) && !moves_strings(node.op_type))
      throw Error(node.op_type + " node '" + node.name +
                  "': string tensors are not supported by " + node.op_type + " here");
    maybe_strings = maybe_strings || d == DType::String || d == DType::Undefined;
  }
  try {
    auto kernel = table().at(key)(graph, node);
    if (touches_half(graph, node))
      kernel = wrap_half_adapter(std::move(kernel), declared_outputs(graph, node));
    if (maybe_strings && moves_strings(node.op_type))
      kernel = wrap_string_adapter(node.op_type, std::move(kernel));
    return kernel;
  } catch (const Error& e) {
    throw Error(node.op_type + " node '" + node.name + "': " + e.what());
  }
}

}  // namespace fx
