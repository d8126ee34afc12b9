// SPDX-License-Identifier: Apache-2.0
#pragma once
// Seeded random inputs for a graph's runtime inputs, so that a profile can run a
// model without input files and two runs (unfused, fused) see the same data.
//
// Floats are uniform in [-1, 1). Integer inputs that index something (Gather
// indices) are uniform in [0, size of the gathered axis); other integers in [0, 2);
// bools are fair coins. The generator is the project's own (splitmix64), so values
// do not change between standard libraries. Symbolic dims must be bound first
// (LoadOptions::dims); an unbound one is an fx::Error naming the input and the dim.

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"
#include "runtime/tensor.h"

namespace fx {

std::map<std::string, Tensor> random_inputs(const Graph& graph, uint64_t seed);

}  // namespace fx
