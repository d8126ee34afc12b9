// SPDX-License-Identifier: Apache-2.0
#pragma once
// The project's kernels by op type: one explicit table (no self-registration), filled
// by the kernel files' register functions.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

// Creates the kernel of one node; may read constant inputs (weights) from the graph.
// Throws fx::Error naming the node for attributes it cannot handle.
using KernelFactory = std::function<std::shared_ptr<Kernel>(const Graph&, const Node&)>;
using KernelTable = std::map<std::string, KernelFactory>;

// The kernel for `node`; throws fx::Error "unsupported op X (node N)" when none.
// `opset` is the model's default-domain opset (0: latest); a few ops changed
// meaning (Softmax before 13, PRelu before 7): their old form is registered as
// "<op>@legacy".
std::shared_ptr<Kernel> make_kernel(const Graph& graph, const Node& node, int64_t opset = 0);
inline constexpr const char* kLegacyOpsetSuffix = "@legacy";
bool is_supported_op(const std::string& domain, const std::string& op_type);
std::vector<std::string> supported_ops();

// The registered ops grouped by the register function that added them (for the
// generated operator table, docs/operators.md). `reference_speed`: plain loops
// kept for coverage, not tuned.
struct KernelFamily {
  std::string name;
  bool reference_speed = false;
  std::vector<std::string> ops;
};
std::vector<KernelFamily> kernel_families();

// Registration functions of the kernel files (kernel_registry.cc's kRegistrations
// lists each once, with its family name).
void register_elementwise_kernels(KernelTable& t);
void register_elementwise_more_kernels(KernelTable& t);
void register_dnnl_kernels(KernelTable& t);
void register_shape_kernels(KernelTable& t);
void register_data_kernels(KernelTable& t);
void register_reduce_kernels(KernelTable& t);
void register_norm_kernels(KernelTable& t);
void register_pool_kernels(KernelTable& t);
void register_resize_kernels(KernelTable& t);
void register_pad_kernels(KernelTable& t);
void register_matmul_kernels(KernelTable& t);
void register_index_kernels(KernelTable& t);
void register_deconv_kernels(KernelTable& t);
void register_recurrent_kernels(KernelTable& t);
void register_detection_kernels(KernelTable& t);
void register_scatter_gather_kernels(KernelTable& t);
void register_layout_kernels(KernelTable& t);
void register_quant_kernels(KernelTable& t);
void register_math_kernels(KernelTable& t);
void register_signal_kernels(KernelTable& t);
void register_sampling_kernels(KernelTable& t);
void register_random_kernels(KernelTable& t);
void register_einsum_kernels(KernelTable& t);
void register_control_flow_kernels(KernelTable& t);
void register_string_kernels(KernelTable& t);  // after shape's: wraps Cast and CastLike

// Whether op_type's kernel takes string tensors (string_kernels.cc); make_kernel refuses
// a declared string input to any other op instead of letting it read no bytes.
bool takes_strings(const std::string& op_type);

}  // namespace fx
