// SPDX-License-Identifier: Apache-2.0
#include "codegen/kernel_export.h"

#include <filesystem>
#include <fstream>

#include "codegen/fused_program.h"
#include "codegen/kernel_compiler.h"
#include "codegen/kernel_ir.h"
#include "util/error.h"

namespace fx {

nlohmann::json write_kernel_sources(const Graph& g, const std::vector<const FusionGroup*>& groups,
                                    const std::string& dir, const std::string& model) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw FileError(dir, "cannot create the folder: " + ec.message());
  KernelCompiler cc;
  nlohmann::json m{{"model", model},
                   {"compiler", cc.compiler().value_or("")},
                   {"flags", cc.flags_string()},
                   {"abi",
                    "void entry(const float* const* inputs, float* const* outputs, "
                    "const int64_t* dims, int threads)"},
                   {"groups", nlohmann::json::array()}};
  for (const FusionGroup* fg : groups) {
    const std::string src = generate_group_source(g, *fg);
    const std::string file = fg->id + ".cc";
    std::ofstream f(dir + "/" + file);
    f << src;
    if (!f) throw FileError(dir + "/" + file, "cannot write");
    const std::string entry = c_identifier(fg->id);
    const bool generated = src.find("extern \"C\" void " + entry + "(") != std::string::npos;
    m["groups"].push_back(
        {{"id", fg->id},
         {"pattern", fg->pattern},
         {"nodes", fg->nodes},
         {"file", file},
         {"entry", generated ? entry : ""},
         {"kind", generated                                 ? "generated_cpp"
                  : src.find("oneDNN") != std::string::npos ? "dnnl_post_ops"
                                                            : "runtime_kernels"}});
  }
  std::ofstream mf(dir + "/manifest.json");
  mf << m.dump(2) << "\n";
  if (!mf) throw FileError(dir + "/manifest.json", "cannot write");
  return m;
}

}  // namespace fx
