// SPDX-License-Identifier: Apache-2.0
#pragma once
// Converts a parsed onnx::GraphProto (after shape inference) into the IR's Graph.

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/tensor_proto.h"
#include "onnx/wire_format.h"

namespace fx {

struct GraphImportContext {
  std::string path;  // for error messages
  std::shared_ptr<const MappedFile> file;
  std::vector<std::optional<onnx_wire::Region>> initializer_data;  // see wire_format.h
  ExternalFileResolver external;
  // True while importing a subgraph (If branch, Loop/Scan body): names it reads but
  // does not define become its outer-scope references (Graph::outer_refs) instead of
  // undefined values.
  bool subgraph = false;
};

Graph graph_from_proto(const onnx::GraphProto& g, const GraphImportContext& ctx);

// What graph_from_proto takes from a ValueInfoProto's type: the element type
// (DType::Undefined when absent or unknown; a sequence's or optional's element type)
// and the shape (rank unknown when absent, and for sequences and optionals).
DType dtype_from_type(const onnx::TypeProto& type);
Shape shape_from_type(const onnx::TypeProto& type);
ValueKind kind_from_type(const onnx::TypeProto& type);

}  // namespace fx
