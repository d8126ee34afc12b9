// SPDX-License-Identifier: Apache-2.0
#pragma once
// Just enough of the protobuf wire format to open a model without copying its
// weights: strip_large_raw_data() rewrites a serialized ModelProto so that the
// raw_data of large initializers is left out, and reports where each one lies in
// the original file. libprotobuf then parses only the graph's structure (a few
// hundred KB for a 350 MB model) and the weights stay in the mapped file.
//
// Field numbers used (onnx.proto3): ModelProto.graph = 7; GraphProto.initializer = 5;
// TensorProto.raw_data = 9.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fx::onnx_wire {

struct Region {
  std::size_t offset = 0;
  std::size_t length = 0;
};

struct StrippedModel {
  std::string bytes;  // the ModelProto without large raw_data payloads
  // One entry per GraphProto.initializer of the main graph, in file order: where its
  // raw_data lies in the input when it was stripped, nullopt when left in place.
  std::vector<std::optional<Region>> initializer_data;
};

// Throws std::runtime_error with the byte offset when the input is not a
// well-formed protobuf message (truncated, random bytes, text).
StrippedModel strip_large_raw_data(std::span<const std::byte> model, std::size_t threshold);

}  // namespace fx::onnx_wire
