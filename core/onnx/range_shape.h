// SPDX-License-Identifier: Apache-2.0
#pragma once
// The length of Range outputs that ONNX shape inference leaves unknown. Its Range
// inference reads only constant inputs, while a transformer's causal mask takes the
// limit from the input's shape (Range(0, Cast(Gather(Shape(x), 1)), 1)): data
// propagation knows that value (seq, or its bound number), the Range does not. Without
// the length, the mask, its Where and everything after have unknown shapes, so the
// analysis cannot estimate or fuse them (GPT-2's Where before each Softmax).

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>

namespace fx {

// Values ONNX data propagation computed, by value name (shape_inference's map).
using ShapeData = std::unordered_map<std::string, onnx::TensorShapeProto>;

// For each Range whose output's length is unknown in `g`'s value_info: when start,
// limit and delta are known (constants, or scalars in `data`), writes the length
// (a number, or the limit's symbol when start is 0 and delta 1) into value_info, which
// it clears otherwise.
// Returns how many lengths it wrote; run shape inference again to carry them on.
int set_range_lengths(onnx::GraphProto& g, const ShapeData& data);

}  // namespace fx
