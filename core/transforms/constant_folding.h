// SPDX-License-Identifier: Apache-2.0
#pragma once
// Evaluation of one node whose inputs are all known, for the fixed op set the
// canonical passes fold. These are the ops exporters wrap around shapes and weights:
//
//   data movement (any fixed-size dtype)  Reshape Flatten Squeeze Unsqueeze Concat
//                                         Gather Slice Transpose Identity Expand
//   arithmetic (int32/int64/float/double/bool)  Add Sub Mul Div Neg Abs Min Max Equal
//                                         Less Greater Not And Or Where Cast Sqrt
//                                         Reciprocal Floor Ceil (float only)
//   full reductions                       ReduceMin ReduceMax over every axis
//   shape makers                          Shape Size ConstantOfShape Range
//
// Anything else, a dtype outside these, or a result over kFoldLimitBytes returns null:
// the node stays and runs. The limit keeps the canonical graph from holding large
// copies of weights a kernel would read in place anyway; it bounds memory, not speed.

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/graph.h"

namespace fx::transforms {

inline constexpr std::size_t kFoldLimitBytes = std::size_t{16} << 20;

// The node's single output, or null when it is not folded (see above). `inputs` holds
// the data of each input (null for an omitted optional input).
std::shared_ptr<TensorData> fold_node(const Node& n,
                                      const std::vector<std::shared_ptr<TensorData>>& inputs);

// The data a Constant node holds (value, value_float(s), value_int(s)); null for
// sparse or string values.
std::shared_ptr<TensorData> constant_node_data(const Node& n);

}  // namespace fx::transforms
