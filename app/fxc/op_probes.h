// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small graphs that run one operator on a given data type, for `fxc ops --markdown`'s
// type column. Most operators run on one to three inputs of ones of one shape (the
// generic probe in cmd_ops.cc); the ones that need attributes, inputs of other shapes
// or ranks, index values, sequences or subgraphs have a graph written here.
//
//   if (const ProbeRecipe* r = find_probe_recipe("TopK")) ProbeCase c = (*r)(DType::Int32);

#include <functional>
#include <map>
#include <string>

#include "ir/graph.h"
#include "runtime/tensor.h"

namespace fxc {

struct ProbeCase {
  fx::Graph graph;
  std::map<std::string, fx::Tensor> feeds;
};

// Builds a graph whose operator takes data of type t; may throw for a type the
// recipe cannot express (the type is then not listed).
using ProbeRecipe = std::function<ProbeCase(fx::DType t)>;

// A tensor of ones of type t (for strings, "1"): a value every op takes (no division by
// zero, a valid shape, index and count).
fx::Tensor probe_ones(fx::DType t, const std::vector<int64_t>& dims);

// The recipe for `op`, or null when the generic probe applies.
const ProbeRecipe* find_probe_recipe(const std::string& op);

}  // namespace fxc
