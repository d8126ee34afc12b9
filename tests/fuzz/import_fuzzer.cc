// SPDX-License-Identifier: Apache-2.0
// Feeds arbitrary bytes to the ONNX importer. Any outcome other than a model or an
// fx::Error (a crash, a sanitizer report, another exception) is a bug.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "onnx/model_loader.h"
#include <spdlog/spdlog.h>

#include "util/error.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // warnings about bad models would drown the log
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fx-fuzz-" + std::to_string(getpid()) + ".onnx";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    auto m = fx::load_onnx(path);
    (void)m.graph.parameter_bytes();
  } catch (const fx::Error&) {
  }
  return 0;
}
