// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/cuda_compile.h"

#include <cstdlib>
#include <filesystem>

#include "util/error.h"

namespace fx::cuda {

namespace fs = std::filesystem;

std::string find_nvcc(std::string* why) {
  std::vector<std::string> tried;
  if (const char* v = std::getenv("FX_NVCC"); v && *v) tried.push_back(v);
  tried.push_back("/usr/local/cuda/bin/nvcc");
  std::error_code ec;
  for (const auto& t : tried)
    if (fs::exists(t, ec)) return t;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (std::size_t b = 0; b <= p.size();) {
      std::size_t e = p.find(':', b);
      if (e == std::string::npos) e = p.size();
      const fs::path cand = fs::path(p.substr(b, e - b)) / "nvcc";
      if (e > b && fs::exists(cand, ec)) return cand.string();
      b = e + 1;
    }
  }
  if (why) {
    *why = "no nvcc found (tried";
    for (const auto& t : tried) *why += " " + t;
    *why += " and PATH; set FX_NVCC)";
  }
  return {};
}

std::shared_ptr<CompiledLibrary> build_cuda_library(const std::string& source,
                                                    const std::string& stem,
                                                    const std::string& arch) {
  std::string why;
  const std::string nvcc = find_nvcc(&why);
  if (nvcc.empty()) throw Error("CUDA kernels: " + why);
  CompilerOptions o;
  o.compiler = nvcc;
  const fs::path root = fs::path(nvcc).parent_path().parent_path();
  o.flags = {"-x",
             "cu",
             "-O3",
             "-std=c++17",
             "-arch=" + arch,
             "-Xcompiler",
             "-fPIC",
             "-shared",
             "-cudart",
             "shared",
             "-Xlinker",
             "-rpath=" + (root / "lib64").string() + ":" + (root / "lib").string()};
  KernelCompiler cc(o);
  return cc.build(source, stem);
}

}  // namespace fx::cuda
