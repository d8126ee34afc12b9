// SPDX-License-Identifier: Apache-2.0
#pragma once
// How fast each registered op's kernel is, for `fxc ops`, docs/operators.md and the
// benchmark corpus's table (docs/corpus.md lists the models that run a reference kernel
// and the share of their time it takes):
//
//   OpSpeed s = kernel_speed("DFT");   // s.speed == KernelSpeed::Reference
//
// Optimized: vectorized, spread over threads, or a library's (oneDNN, memcpy).
// Reference: a naive scalar loop with neither, kept for coverage.

#include <string>
#include <vector>

namespace fx {

enum class KernelSpeed { Optimized, Reference };
const char* kernel_speed_name(KernelSpeed s);  // "optimized" | "reference"

struct OpSpeed {
  std::string op;
  std::string family;  // kernel_registry.h's KernelFamily
  KernelSpeed speed = KernelSpeed::Optimized;
  std::string note;  // why the op differs from its family, or which of its forms are fast
};

// Every registered op of the default domain, in kernel_families() order: its family's
// speed class unless kernel_speed.cc lists the op apart.
std::vector<OpSpeed> op_speeds();
// One op's; throws fx::Error when no kernel is registered for it.
OpSpeed kernel_speed(const std::string& op_type);

}  // namespace fx
