// SPDX-License-Identifier: Apache-2.0
#include "codegen/op_exprs.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "codegen/kernel_ir.h"
#include "util/error.h"

namespace fx {

namespace {

const std::map<std::string, int>& arities() {
  static const std::map<std::string, int> m{
      {"Add", 2},        {"Sub", 2},   {"Mul", 2},       {"Div", 2},         {"Max", 2},
      {"Min", 2},        {"Pow", 2},   {"Neg", 1},       {"Abs", 1},         {"Relu", 1},
      {"Sigmoid", 1},    {"Tanh", 1},  {"Exp", 1},       {"Log", 1},         {"Sqrt", 1},
      {"Reciprocal", 1}, {"Erf", 1},   {"LeakyRelu", 1}, {"HardSigmoid", 1}, {"HardSwish", 1},
      {"Clip", 1},       {"Elu", 1},   {"Softplus", 1},  {"Identity", 1},    {"Floor", 1},
      {"Ceil", 1},       {"Gelu", 1},  {"GeluTanh", 1},  {"Mish", 1},        {"Sin", 1},
      {"Cos", 1},        {"Where", 3},
  };
  return m;
}

}  // namespace

std::optional<int> elementwise_arity(const std::string& op) {
  auto it = arities().find(op);
  if (it == arities().end()) return std::nullopt;
  return it->second;
}

std::string c_float_literal(float v) {
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  if (std::isnan(v)) return "NAN";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9gf", double(v));
  std::string s = buf;
  // "1f" is not a C literal; "1.f" is.
  if (s.find_first_of(".e") == std::string::npos) s.insert(s.size() - 1, ".");
  return s;
}

std::string c_expression(const KOp& op, const std::vector<std::string>& a) {
  const std::string& o = op.op;
  auto A = [&](std::size_t i) { return "(" + a.at(i) + ")"; };
  std::string al = c_float_literal(op.alpha), be = c_float_literal(op.beta);
  if (o == "Add") return A(0) + " + " + A(1);
  if (o == "Sub") return A(0) + " - " + A(1);
  if (o == "Mul") return A(0) + " * " + A(1);
  if (o == "Div") return A(0) + " / " + A(1);
  if (o == "Max") return "fx_max(" + a[0] + ", " + a[1] + ")";
  if (o == "Min") return "fx_min(" + a[0] + ", " + a[1] + ")";
  if (o == "Pow") {
    // Common exponents as multiplications: powf does not vectorize.
    if (a[1] == "2.f") return A(0) + " * " + A(0);
    if (a[1] == "3.f") return A(0) + " * " + A(0) + " * " + A(0);
    if (a[1] == "0.5f") return "sqrtf(" + a[0] + ")";
    if (a[1] == "1.f") return A(0);
    return "powf(" + a[0] + ", " + a[1] + ")";
  }
  if (o == "Neg") return "-" + A(0);
  if (o == "Abs") return "fabsf(" + a[0] + ")";
  if (o == "Relu") return "fx_max(" + a[0] + ", 0.f)";
  if (o == "Sigmoid") return "1.f / (1.f + fx_expf(-" + A(0) + "))";
  if (o == "Tanh") return "fx_tanhf(" + a[0] + ")";
  if (o == "Exp") return (op.nonpositive ? "fx_expf_le0(" : "fx_expf(") + a[0] + ")";
  if (o == "Log") return "logf(" + a[0] + ")";
  if (o == "Sqrt") return "sqrtf(" + a[0] + ")";
  if (o == "Reciprocal") return "1.f / " + A(0);
  if (o == "Erf") return "fx_erff(" + a[0] + ")";
  if (o == "LeakyRelu") return A(0) + " > 0.f ? " + A(0) + " : " + al + " * " + A(0);
  if (o == "HardSigmoid") return "fx_max(0.f, fx_min(1.f, " + al + " * " + A(0) + " + " + be + "))";
  if (o == "HardSwish")
    return A(0) + " * fx_max(0.f, fx_min(1.f, " + A(0) + " * (1.f / 6.f) + 0.5f))";
  if (o == "Clip") return "fx_min(fx_max(" + a[0] + ", " + al + "), " + be + ")";
  if (o == "Elu")
    return A(0) + " > 0.f ? " + A(0) + " : " + al + " * (fx_expf(" + a[0] + ") - 1.f)";
  if (o == "Softplus") return "log1pf(fx_expf(" + a[0] + "))";
  if (o == "Identity") return a[0];
  if (o == "Where") return A(0) + " ? " + A(1) + " : " + A(2);
  if (o == "Floor") return "floorf(" + a[0] + ")";
  if (o == "Ceil") return "ceilf(" + a[0] + ")";
  if (o == "Sin") return "sinf(" + a[0] + ")";
  if (o == "Cos") return "cosf(" + a[0] + ")";
  if (o == "Gelu") return "0.5f * " + A(0) + " * (1.f + fx_erff(" + A(0) + " * 0.70710678f))";
  if (o == "GeluTanh") {
    return "0.5f * " + A(0) + " * (1.f + fx_tanhf(0.79788456f * (" + A(0) + " + 0.044715f * " +
           A(0) + " * " + A(0) + " * " + A(0) + ")))";
  }
  if (o == "Mish") return A(0) + " * fx_tanhf(log1pf(fx_expf(" + a[0] + ")))";
  throw Error("codegen: no C expression for op " + o + " (node " + op.node + ")");
}

}  // namespace fx
