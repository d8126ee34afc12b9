// SPDX-License-Identifier: Apache-2.0
#pragma once
// The elementwise ops the C++ emitter knows, as C expressions over float operands.

#include <optional>
#include <string>
#include <vector>

namespace fx {

struct KOp;

// Number of tensor operands of an elementwise op the emitter supports, or nullopt.
// (Clip's min/max and similar constant operands are folded into the KOp's fields.)
std::optional<int> elementwise_arity(const std::string& op);

// The C expression computing `op` (exp, erf and tanh as the preludes' fx_expf, fx_erff,
// fx_tanhf, which vectorize on the CPU). The from argument expressions; throws fx::Error for an
// op elementwise_arity() does not know.
std::string c_expression(const KOp& op, const std::vector<std::string>& args);

// A float as a C literal that round-trips ("1.5f", "-INFINITY").
std::string c_float_literal(float v);

}  // namespace fx
