// SPDX-License-Identifier: Apache-2.0
#pragma once
// oneDNN's Winograd convolution (its jit_wino_4x3 / jit_fp32_wino_2x3 kernels on
// avx512_core) for 3x3 stride-1 convolutions of a single image, used by the unfused
// Conv kernel and the fused Conv kernel alike: it is a choice of algorithm, not a
// fusion. Why: on ResNet's 3x3 shapes it does the same work in about half the time of
// oneDNN's direct (brgemm) kernels, which ONNX Runtime's MLAS matches; results agree
// with the direct convolution to ~1e-6 of the output's scale (well inside the
// before/after equivalence tolerance, profile/equivalence.h).
//
// oneDNN's Winograd kernels take only blocked activations (nChw16c). Each part of the
// work, one per thread on the runtime's pool (runtime/dnnl_parts.h), therefore
// reorders its own slice of the input (NCHW or NHWC) into a dense blocked buffer,
// convolves it (post-ops included; a residual of the sum post-op is reordered into its
// blocked output first) and reorders its result into its slice of the output. Parts
// split large maps over output rows, small ones (14x14: the weights dominate)
// over output channels, each part reading the whole input.
//
// Only where each part's Winograd-domain weights fit the core's L2 cache
// (winograd_weight_budget): they are 1.8x (F(2x2,3x3)) to 4x (F(4x4,3x3)) the direct
// weights, and a model's weights do not stay in the last-level cache between runs
// (ResNet-18: 46 MB), so larger ones come from memory each run. Measured inside
// ResNet-18 (fxc codegen, ONEDNN_VERBOSE, per part): 56x56x64 (0.6 MB, fits) 0.48 ->
// 0.24 ms; 28x28x128 (2.4 MB) 0.47 -> 0.28-0.65 ms although 0.19 ms alone; 14x14x256
// (2.1 MB per channel part) 0.47 -> 0.39-0.43 ms.
//
// FX_WINOGRAD=0 turns it off (paired measurements against the direct convolution);
// FX_WINOGRAD=all takes it wherever oneDNN has it, whatever the weights' size.

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/dnnl_parts.h"

namespace fx {

struct WinogradConvSpec {
  std::string name;  // for the log
  int64_t ic = 0, ih = 0, iw = 0;
  int64_t oc = 0, oh = 0, ow = 0;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool x_nhwc = false, y_nhwc = false, residual_nhwc = false;
  const float* weights = nullptr;  // [oc, ic, 3, 3], copied into oneDNN's layout
  const float* bias = nullptr;     // [oc], null none; must outlive the convolution
  dnnl::post_ops post_ops;         // eltwise and sum only
  bool has_sum = false;            // post_ops has a sum: run() gets a residual
};

// Whether the FX_WINOGRAD switch allows Winograd (default on).
bool winograd_enabled();
// Bytes of Winograd-domain weights a part may have: the L2 cache of a core (1 MiB when
// unknown), unlimited with FX_WINOGRAD=all.
int64_t winograd_weight_budget();

// Whether a convolution's geometry is one Winograd is used for: a single image, 3x3,
// stride 1, no dilation, no groups, at least 64 input and output channels in
// multiples of 16 (oneDNN's block; the shapes measured), a map of at least 7x7.
bool winograd_shape(int64_t n, int64_t ic, int64_t oc, int64_t group, int64_t oh, int64_t ow,
                    const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& dilations);

// Whether WinogradConv::make takes Winograd for a convolution of winograd_shape with
// this geometry (spec's sizes, pads and layouts; weights and bias need not be set) on
// `threads` parts: the switch, oneDNN having a Winograd kernel for it, and each part's
// weights within winograd_weight_budget. Calibration asks it (profile/winograd_probe.h)
// and records the answers in the device profile, which the cost model reads
// (device/winograd_support.h); tests/calibration checks the two agree.
bool winograd_runs(const WinogradConvSpec& spec, int threads);

class WinogradConv {
 public:
  // The convolution split for `threads`, or null when Winograd is switched off or
  // oneDNN has no Winograd kernel for it (the caller takes the direct path).
  static std::unique_ptr<WinogradConv> make(const WinogradConvSpec& spec, int threads);

  // x: the input, residual: the sum post-op's operand (may be y itself), y: the output.
  void run(const void* x, const void* residual, void* y, int threads);

  // "jit_wino_4x3:avx512_core, 2 row parts" and the like.
  const std::string& description() const { return description_; }

 private:
  friend bool winograd_runs(const WinogradConvSpec& spec, int threads);
  // make(), or with `probe` only the decision (parts without weights or steps).
  static std::unique_ptr<WinogradConv> make_parts(const WinogradConvSpec& spec, int threads,
                                                  bool probe);
  struct Part {
    std::vector<DnnlPart> steps;  // reorder in, [reorder residual], convolution, reorder out
    dnnl::memory src, dst;        // blocked buffers
  };
  std::vector<Part> parts_;
  std::string description_;
};

}  // namespace fx
