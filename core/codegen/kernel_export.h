// SPDX-License-Identifier: Apache-2.0
#pragma once
// The generated kernels of a plan as files: one <group id>.cc per group (what
// generate_group_source gives) and manifest.json naming each file's group, nodes,
// entry point and kind (generated_cpp, dnnl_post_ops or runtime_kernels), the
// compiler and flags it is meant for, and the entry ABI. `fxc export --kernels` and
// the GUI's Export > Kernels write this.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "ir/graph.h"

namespace fx {

// Creates `dir` when missing; returns the manifest it wrote. Throws fx::FileError
// naming the file that cannot be written.
nlohmann::json write_kernel_sources(const Graph& g, const std::vector<const FusionGroup*>& groups,
                                    const std::string& dir, const std::string& model);

}  // namespace fx
