// SPDX-License-Identifier: Apache-2.0
#pragma once
// Export of a fused model: the original ONNX model where each fused group is one call
// of a model-local ONNX function (domain ai.fusion_explorer, body = the group's
// original nodes), with Conv + BatchNormalization pairs inside a group folded into the
// Conv's weights. Any ONNX runtime that inlines model-local functions (ONNX Runtime
// does) still runs it and computes the original's outputs.
//
//   auto r = export_fused_model(loaded, {{"fg-1a2b3c4d", {"conv1", "bn1", "relu1"}}},
//                               "fused.onnx");
//
// The original proto's large initializers were left out at import (wire_format.h);
// they are put back from the Graph's constant data. A model over 2 GB is written with
// its large initializers in "<out>.data" (ONNX external data).

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx/model_loader.h"

namespace fx {

inline constexpr const char* kFusionDomain = "ai.fusion_explorer";

struct ExportGroup {
  std::string id;
  std::vector<std::string> nodes;
};

struct FusedExportResult {
  int nodes_before = 0;
  int nodes_after = 0;
  int functions = 0;
  std::vector<std::string> folded_bn;  // BatchNormalization nodes folded away
  std::vector<std::string> skipped;    // "<group id>: why" for groups left unfused
  bool external_data = false;
};

// Builds the fused ModelProto. Throws fx::Error when the model has no ONNX source.
onnx::ModelProto build_fused_model(const LoadedModel& model, const std::vector<ExportGroup>& groups,
                                   FusedExportResult* result = nullptr);

// build_fused_model + write (external data above `external_threshold` bytes of proto).
// Throws fx::FileError when the file cannot be written.
FusedExportResult export_fused_model(const LoadedModel& model,
                                     const std::vector<ExportGroup>& groups,
                                     const std::string& out_path,
                                     std::size_t external_threshold = (std::size_t{1} << 31) -
                                                                      (1 << 20));

// Replaces calls of model-local functions by their bodies (formal parameter names are
// renamed to the call's actual names), so that our importer can run a fused export.
// Returns the number of calls inlined.
int inline_local_functions(onnx::ModelProto& model);

}  // namespace fx
