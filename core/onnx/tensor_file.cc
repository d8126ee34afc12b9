// SPDX-License-Identifier: Apache-2.0
#include "onnx/tensor_file.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <sstream>

#include "onnx/tensor_proto.h"
#include "util/error.h"

namespace fx {

std::shared_ptr<TensorData> read_tensor_file(const std::string& path, std::string* name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open tensor file");
  std::stringstream buf;
  buf << in.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(buf.str())) throw FileError(path, "not a serialized onnx TensorProto");
  if (name) *name = proto.name();
  const auto dtype = static_cast<DType>(proto.data_type());
  if (!dtype_is_valid(proto.data_type()) || (dtype_size(dtype) == 0 && dtype != DType::String)) {
    throw FileError(path, "unsupported tensor data type " + std::to_string(proto.data_type()));
  }
  auto no_external = [&path](const std::string& loc) -> std::shared_ptr<const MappedFile> {
    throw FileError(path, "external data '" + loc + "' is not supported in tensor files");
  };
  return tensor_from_proto(proto, path, no_external);
}

void write_tensor_file(const std::string& path, const TensorData& data, const std::string& name) {
  onnx::TensorProto proto;
  tensor_to_proto(data, name, proto);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !proto.SerializeToOstream(&out)) throw FileError(path, "cannot write tensor file");
}

}  // namespace fx
