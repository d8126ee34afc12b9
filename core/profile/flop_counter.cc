// SPDX-License-Identifier: Apache-2.0
#include "profile/flop_counter.h"

#include <set>

namespace fx {
namespace {

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t product_from(const std::vector<int64_t>& dims, std::size_t first) {
  int64_t n = 1;
  for (std::size_t i = first; i < dims.size(); ++i) n *= dims[i];
  return n;
}

const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> ops = {
      "Abs",         "Add",        "And",       "Ceil",
      "Celu",        "Clip",       "Cos",       "Div",
      "Elu",         "Equal",      "Erf",       "Exp",
      "Floor",       "Gelu",       "Greater",   "GreaterOrEqual",
      "HardSigmoid", "HardSwish",  "LeakyRelu", "Less",
      "LessOrEqual", "Log",        "Max",       "Mean",
      "Min",         "Mish",       "Mod",       "Mul",
      "Neg",         "Not",        "Or",        "PRelu",
      "Pow",         "Reciprocal", "Relu",      "Round",
      "Selu",        "Sigmoid",    "Sign",      "Sin",
      "Softplus",    "Softsign",   "Sqrt",      "Sub",
      "Sum",         "Tan",        "Tanh",      "ThresholdedRelu",
      "Where",       "Xor",        "IsNaN",     "IsInf",
      "BiasGelu",    "FastGelu"};
  return ops;
}

const std::vector<int64_t>& at(const DimsList& list, std::size_t i) {
  static const std::vector<int64_t> none;
  return i < list.size() ? list[i] : none;
}

}  // namespace

int64_t count_flops(const std::string& op, const Attributes& attrs, const DimsList& in,
                    const DimsList& out) {
  const auto& x = at(in, 0);
  const auto& y = at(out, 0);
  const bool has_bias = in.size() > 2 && !at(in, 2).empty();
  if (op == "Conv") {
    // Each output element: (C_in / group) * prod(kernel) multiply-adds.
    const auto& w = at(in, 1);
    if (w.size() < 2 || y.empty()) return 0;
    return numel(y) * (2 * product_from(w, 1) + (has_bias ? 1 : 0));
  }
  if (op == "ConvTranspose") {
    // Each input element is scattered into (C_out / group) * prod(kernel) outputs.
    const auto& w = at(in, 1);
    if (w.size() < 2 || x.empty()) return 0;
    return 2 * numel(x) * product_from(w, 1) + (has_bias ? numel(y) : 0);
  }
  if (op == "MatMul" || op == "FusedMatMul") {
    if (x.empty() || y.empty()) return 0;
    return 2 * numel(y) * x.back();
  }
  if (op == "Gemm") {
    if (x.size() != 2 || y.empty()) return 0;
    const int64_t k = attrs.get_int("transA", 0) ? x[0] : x[1];
    return 2 * numel(y) * k + (has_bias ? numel(y) : 0);
  }
  if (elementwise_ops().count(op)) return y.empty() && out.empty() ? 0 : numel(y);
  if (op == "BatchNormalization") return 2 * numel(y);
  if (op == "LayerNormalization" || op == "SkipLayerNormalization") return 8 * numel(y);
  if (op == "Softmax" || op == "LogSoftmax") return 5 * numel(y);
  if (op.rfind("Reduce", 0) == 0 || op == "GlobalAveragePool" || op == "GlobalMaxPool")
    return x.empty() && in.empty() ? 0 : numel(x);
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    auto kernel = attrs.get_ints("kernel_shape");
    return numel(y) * numel(kernel);
  }
  return 0;
}

}  // namespace fx
