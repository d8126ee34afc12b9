// SPDX-License-Identifier: Apache-2.0
#pragma once
// A float32 convolution of any rank oneDNN takes (1-D, 2-D, 3-D) and any group count,
// reading and writing plain NC[D]HW, cut into oneDNN primitives that run side by side
// on the runtime's pool (dnnl_parts.h). oneDNN runs each part on one thread, so a
// convolution left whole runs at one thread's speed; every cut keeps each part's
// memory dense, which oneDNN's fast kernels want. The cut, in order of preference:
//
//   channels-last  oneDNN's own choice for the shape (format `any`) is channels-last
//                  and not its gemm kernel (its brgemm kernels, grouped and 3-D ones
//                  included): the input is reordered to N[D]HWC, the convolution split
//                  over the first spatial dim of its output, the output reordered back.
//                  Two reorders per run (reorders_per_run); kernels larger than 1x1 only,
//                  since a 1x1 on NCHW is one GEMM already and the reorders would cost
//                  about what it computes.
//   blocked        oneDNN's choice is channels blocked by 4, 8 or 16 (nChw8c, ...: its jit
//                  kernels, for grouped convolutions whose groups are whole blocks, or on
//                  CPUs without brgemm kernels) and a jit kernel: the input and output are
//                  reordered around it, the convolution split over whole groups or output
//                  channel blocks (each slice of one image's blocked tensor is dense and
//                  starts where the same channels start in NCHW). Two reorders per run.
//   channels       one image: split over output channels, or over whole groups for a
//                  grouped convolution (each part then reads only its groups' channels).
//   single         several images, or weights given per run: one primitive.
//
// FX_NO_BLOCKED=1 rules out channels-last (for comparisons).

#include <memory>
#include <string>
#include <vector>

#include "runtime/dnnl_parts.h"

namespace fx {

struct ConvPartsSpec {
  std::vector<int64_t> x, w, out;  // ONNX dims: x [N, C, ...], w [OC, C/group, k...]
  int64_t group = 1;
  dnnl::memory::dims strides, dil, pl, pr;  // oneDNN's: dilation counted from 0
  const float* weights = nullptr;           // constant weights (read at build), or null:
                                            // given to every run
  bool bias = false;                        // a bias [OC] is given to every run
};

class ConvParts {
 public:
  enum class Cut { ChannelsLast, Blocked, Channels, Single };

  ConvParts(const ConvPartsSpec& spec, int threads);

  // x, y: NC[D]HW; w: the weights when the spec had none (else ignored); b: the bias
  // when the spec says so.
  void run(const void* x, const void* w, const void* b, void* y, int threads);

  Cut cut() const { return cut_; }
  std::size_t parts() const { return parts_.size(); }
  // Layout conversions of activations per run (the input in, the output back).
  int reorders_per_run() const { return cut_ == Cut::ChannelsLast || cut_ == Cut::Blocked ? 2 : 0; }
  static const char* cut_name(Cut c);

 private:
  void build_channels_last(const ConvPartsSpec& s, const std::vector<int64_t>& wd, int threads);
  void build_channels(const ConvPartsSpec& s, const std::vector<int64_t>& wd, int threads);
  bool build_blocked(const ConvPartsSpec& s, const std::vector<int64_t>& wd, int64_t xb, int64_t yb,
                     int threads);

  Cut cut_ = Cut::Single;
  std::vector<DnnlPart> parts_;
  std::vector<DnnlPart> in_parts_, out_parts_;  // channels-last: reorders in and back
  dnnl::memory src_cl_, dst_cl_;                // channels-last or blocked copies
};

// oneDNN's weight dims for a Conv's ONNX weight dims: [G, O/G, I/G, k...] when grouped.
std::vector<int64_t> dnnl_conv_weight_dims(const std::vector<int64_t>& w, int64_t group);

}  // namespace fx
