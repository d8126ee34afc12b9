// SPDX-License-Identifier: Apache-2.0
#pragma once
// The parsed ONNX model kept beside the IR, for the parts that need ONNX itself:
// export (rewrites the original model), the checker, and the kernels' view of
// subgraphs. Includes libonnx headers: only the onnx layer and its users include it.

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "ir/mapped_file.h"

namespace fx {

struct OnnxSource {
  // The model as parsed, large initializer payloads left out (see wire_format.h);
  // the IR's TensorData holds them, referenced in `file`.
  onnx::ModelProto proto;
  std::shared_ptr<const MappedFile> file;
  std::string directory;  // where external data files are looked up
};

}  // namespace fx
