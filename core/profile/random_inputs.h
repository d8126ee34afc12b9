// SPDX-License-Identifier: Apache-2.0
#pragma once
// Seeded random inputs for a graph's runtime inputs, so that a profile can run a
// model without input files and two runs (unfused, fused) see the same data.
//
// Floats (float32/64, float16, bfloat16) are uniform in [-1, 1); bools are fair
// coins. Integers (int8..int64, uint8..uint64) that index something are uniform in
// [0, size of the indexed axis): Gather/GatherElements/ScatterElements indices,
// OneHot indices with a constant depth, also through Cast/Reshape/Squeeze/...;
// other integers are uniform in [0, kRandomIntRange). The generator is the
// project's own (splitmix64), so values do not change between standard libraries.
// Symbolic dims must be bound first (LoadOptions::dims); an unbound one is an
// fx::Error naming the input and the dim. An input that cannot be invented (a
// string, an undeclared type, an unknown rank) is an fx::Error that asks for
// --input NAME=FILE.pb.

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"
#include "runtime/tensor.h"

namespace fx {

// Exclusive upper bound of integer inputs that index nothing the model shows.
inline constexpr int64_t kRandomIntRange = 2;

std::map<std::string, Tensor> random_inputs(const Graph& graph, uint64_t seed);
// The exclusive upper bound random_inputs uses for integer input `input`.
int64_t random_int_bound(const Graph& graph, ValueId input);

}  // namespace fx
