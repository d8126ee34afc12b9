// SPDX-License-Identifier: Apache-2.0
#include "onnx/value_file.h"

#include <onnx/onnx-data_pb.h>

#include <fstream>
#include <sstream>

#include "onnx/tensor_file.h"
#include "onnx/tensor_proto.h"
#include "util/error.h"

namespace fx {

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open value file");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::shared_ptr<TensorData> tensor(const onnx::TensorProto& t, const std::string& path) {
  auto no_external = [&path](const std::string& loc) -> std::shared_ptr<const MappedFile> {
    throw FileError(path, "external data '" + loc + "' is not supported in value files");
  };
  return tensor_from_proto(t, path, no_external);
}

std::vector<std::shared_ptr<TensorData>> sequence(const onnx::SequenceProto& s,
                                                  const std::string& path) {
  if (s.elem_type() != onnx::SequenceProto::TENSOR && s.tensor_values_size() == 0 &&
      s.elem_type() != onnx::SequenceProto::UNDEFINED)
    throw FileError(path, "only sequences of tensors are supported");
  std::vector<std::shared_ptr<TensorData>> out;
  for (const auto& t : s.tensor_values()) out.push_back(tensor(t, path));
  return out;
}

}  // namespace

ValueFile read_value_file(const std::string& path, ValueKind kind) {
  ValueFile out;
  out.kind = kind;
  if (kind == ValueKind::Tensor) {
    out.tensors.push_back(read_tensor_file(path));
    return out;
  }
  const std::string bytes = read_all(path);
  if (kind == ValueKind::Sequence) {
    onnx::SequenceProto s;
    if (!s.ParseFromString(bytes)) throw FileError(path, "not a serialized onnx SequenceProto");
    out.tensors = sequence(s, path);
    return out;
  }
  onnx::OptionalProto o;
  if (!o.ParseFromString(bytes)) throw FileError(path, "not a serialized onnx OptionalProto");
  if (o.has_tensor_value()) {
    out.tensors.push_back(tensor(o.tensor_value(), path));
  } else if (o.has_sequence_value()) {
    out.optional_of_sequence = true;
    out.tensors = sequence(o.sequence_value(), path);
  } else {
    out.has_element = false;
    out.optional_of_sequence = o.elem_type() == onnx::OptionalProto::SEQUENCE;
  }
  return out;
}

}  // namespace fx
