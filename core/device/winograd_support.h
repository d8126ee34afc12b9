// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which convolutions a device's runtime runs with Winograd, as data of its device profile
// (DeviceProfile::winograd), so that the cost model need not ask the runtime.
//
// The runtime decides (runtime/winograd_conv.h: oneDNN's Winograd kernels for 3x3,
// stride-1 convolutions of one image whose per-part Winograd-domain weights fit a core's
// L2). Part of that decision is oneDNN's choice of tile (F(2x2,3x3) or F(4x4,3x3), 1.8x
// or 4x the direct weights), made by heuristics no rule here reproduces; so calibration
// asks the runtime about convolution shapes and the profile records its answers
// (calibration/host_device.h for this host, profile/winograd_probe.h for a model's own
// shapes). The cost model looks a convolution up by its exact geometry; a shape the
// runtime was not asked about is taken as direct. A device without Winograd (the GPU
// presets, FX_WINOGRAD=0) records no shape that runs.
//
// JSON (the profile's "winograd"; absent: none runs):
//   { "threads": 16,   // the parts the runtime splits a convolution into
//     "shapes": [ [ic, oc, ih, iw, oh, ow, pad_top, pad_left, pad_bottom, pad_right, runs],
//                 ... ] }

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fx {

// A 3x3, stride-1, undilated, ungrouped convolution of one image (the only geometry
// the runtime takes Winograd for); NCHW sizes and pads.
struct WinogradShape {
  int64_t ic = 0, oc = 0, ih = 0, iw = 0, oh = 0, ow = 0;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool operator==(const WinogradShape&) const = default;
};

struct WinogradAnswer {
  WinogradShape shape;
  bool runs = false;  // the runtime runs it with Winograd
};

struct WinogradSupport {
  int threads = 0;  // the answers hold for this many parts (0: no answers)
  std::vector<WinogradAnswer> shapes;

  // The recorded answer for `s`; false for a shape the runtime was not asked about.
  bool runs(const WinogradShape& s) const;
  // The recorded answer, if any.
  std::optional<bool> answer(const WinogradShape& s) const;
};

nlohmann::json to_json(const WinogradSupport& w);
// Throws fx::Error for a malformed "winograd" object.
WinogradSupport winograd_support_from_json(const nlohmann::json& j);

}  // namespace fx
