// SPDX-License-Identifier: Apache-2.0
#pragma once
// Keeping oneDNN's int8 convolutions and matmuls exact on CPUs without VNNI.
//
// With VNNI (vpdpbusd: AVX512_VNNI, AVX-VNNI) oneDNN sums u8 x s8 products in 32
// bits. Without it (SSE4.1, AVX2, AVX-512 before Cascade Lake) its kernels add
// each pair of products in 16 bits with saturation (vpmaddubsw), which clips when
// |x1 w1 + x2 w2| > 32767, and for s8 sources they halve the weights first (odd
// weights round): oneDNN's "Nuances of int8 computations". Both are exact when the
// source is u8 and every |w| <= 64 (2 * 255 * 64 < 32768). So there the integer
// kernels feed u8 sources (an s8 source moved by 128, its zero point too) and
// weights as two 7-bit halves, lo + hi = w, whose int32 results are summed here
// before bias, scale and requantization.

#include <cstdint>
#include <vector>

#include "runtime/dnnl_parts.h"
#include "runtime/tensor.h"

namespace fx {

// Whether oneDNN's int8 kernels, as dispatched in this process (ONEDNN_MAX_CPU_ISA
// honoured), multiply-accumulate u8 x s8 exactly for any weights.
bool onednn_int8_dot_exact();

// All |w| <= 64: the non-VNNI kernels are exact on them as they are.
bool fits_7bit(const std::vector<int32_t>& w);

// w (each within [-128, 127]) as lo + hi with both halves within [-64, 64].
struct WeightHalves {
  std::vector<int8_t> lo, hi;
};
WeightHalves split_weights_7bit(const std::vector<int32_t>& w);
// The weight sets an integer kernel runs: w itself as s8, or (`halves`) its two 7-bit
// halves lo and hi, whose accumulators store_halves adds.
std::vector<std::vector<int8_t>> int8_weight_sets(const std::vector<int32_t>& w, bool halves);
// Appends to `parts` one part running `pd` per weight set, all over the same arguments
// (`descs`, `binds`) except two: set h writes its own output tensor, dst_tensors[h] in
// the DNNL_ARG_DST bind, and reads its own weights, reordered from `user_w` into pd's
// layout once and kept in shared_w[h] for the other parts of the kernel.
void append_weight_set_parts(const dnnl::primitive_desc_base& pd,
                             const std::vector<std::pair<int, dnnl::memory::desc>>& descs,
                             const std::vector<DnnlPart::Bind>& binds,
                             const std::vector<int>& dst_tensors, const dnnl::memory::desc& user_w,
                             const std::vector<std::vector<int8_t>>& weight_sets,
                             std::vector<dnnl::memory>& shared_w, std::vector<DnnlPart>& parts);

// dst[i] = src[i] as s8 + 128, as u8 (n bytes).
void shift_s8_to_u8(const void* src, void* dst, int64_t n, int threads);

// The output of an integer kernel whose accumulator came as two int32 halves
// (rows x cols, row-major): acc = lo + hi, then bias, scale, Relu and zero point as
// store_accumulated writes them. plane == 0: y is [rows, cols]; plane > 0: rows are
// the pixels of images of `plane` pixels and y is planar ([image, cols, plane]).
struct HalvesEpilogue {
  int64_t rows = 0, cols = 0, plane = 0;
  const std::vector<float>* bias = nullptr;    // empty or cols
  const std::vector<float>* scales = nullptr;  // 1 or cols (unused for Int32)
  DType y_type = DType::Int32;
  int32_t y_zero_point = 0;
  bool relu = false;
};
// The epilogue of a kernel spec (Int8ConvSpec, Int8MatMulSpec: bias, scales, output
// type, zero point and Relu) over a rows x cols output.
template <class Spec>
HalvesEpilogue halves_epilogue(const Spec& s, int64_t rows, int64_t cols, int64_t plane = 0) {
  HalvesEpilogue e;
  e.rows = rows;
  e.cols = cols;
  e.plane = plane;
  e.bias = &s.bias;
  e.scales = &s.scales;
  e.y_type = s.y_type;
  e.y_zero_point = s.y_zero_point;
  e.relu = s.relu;
  return e;
}
void store_halves(const HalvesEpilogue& e, const int32_t* lo, const int32_t* hi, void* y,
                  int threads);

}  // namespace fx
