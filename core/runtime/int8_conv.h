// SPDX-License-Identifier: Apache-2.0
#pragma once
// An integer convolution over 8-bit activations and weights, as QLinearConv,
// ConvInteger and a fused QDQ Conv group compute it:
//
//   acc = bias + sum (x - x_zero_point) * w          (exact, int32)
//   y   = acc                                         (y_type Int32)
//   y   = saturate(round(acc * scale[oc]) + y_zp)     (y_type UInt8 / Int8; relu: max(.., y_zp))
//   y   = acc * scale[oc]                             (y_type Float32)
//
// 2-D convolutions whose weights fit int8 after their zero point is taken out run
// as oneDNN int8 convolutions (activations reordered to NHWC around them: oneDNN has
// only a reference int8 kernel for NCHW); the rest run an exact reference loop.
// Where oneDNN's int8 kernels lack VNNI, they run on a u8 source with 7-bit weight
// halves, still exact (runtime/int8_exact.h).

#include <memory>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "runtime/dnnl_parts.h"
#include "runtime/tensor.h"

namespace fx {

struct Int8ConvSpec {
  std::vector<int64_t> x_dims;  // [N, C, spatial...], 1 to 3 spatial dims
  std::vector<int64_t> w_dims;  // [M, C / group, k...]
  int64_t group = 1;
  // Per spatial dim, ONNX meaning (dilation 1 = dense).
  std::vector<int64_t> strides, dilations, pads_begin, pads_end;
  DType x_type = DType::UInt8;  // UInt8 or Int8
  int32_t x_zero_point = 0;
  std::vector<int32_t> weights;  // w - w_zero_point, [M, C / group, k...] row-major
  std::vector<float> bias;       // empty or M, in accumulator units
  std::vector<float> scales;     // 1 or M (unused for Int32 output)
  DType y_type = DType::Int32;   // Int32, UInt8, Int8 or Float32
  int32_t y_zero_point = 0;
  bool relu = false;
};

// Fills s.group, strides, dilations and pads (auto_pad resolved) from a Conv-like
// node's attributes; s.x_dims and s.w_dims must be set.
void set_conv_geometry(Int8ConvSpec& s, const Attributes& attrs);
// Output dims of a convolution; throws fx::Error when the output would be empty.
std::vector<int64_t> conv_output_dims(const Int8ConvSpec& s);

class Int8Conv {
 public:
  // Throws fx::Error for inconsistent dims or types.
  Int8Conv(Int8ConvSpec spec, int threads);
  const std::vector<int64_t>& y_dims() const { return y_dims_; }
  // oneDNN's implementation name (with " (7-bit weight halves)" where the weights are
  // split, runtime/int8_exact.h), or "reference".
  const std::string& impl() const { return impl_; }
  // x_nhwc / y_nhwc: the image (4-D only) is, or is to be written, in NHWC memory order
  // under its NCHW dims (a layout plan's tensors between int8 steps): oneDNN then reads
  // or writes it in place, without the reorder.
  void run(const void* x, void* y, int threads, bool x_nhwc = false, bool y_nhwc = false);

 private:
  void build_onednn(int threads);
  void run_reference(const void* x, void* y) const;
  void run_halves(void* y, int threads, bool y_nhwc);

  Int8ConvSpec s_;
  std::vector<int64_t> y_dims_;
  std::string impl_ = "reference";
  std::vector<DnnlPart> in_parts_, parts_, out_parts_;  // NCHW -> NHWC, conv, NHWC -> NCHW
  dnnl::memory src_nhwc_, dst_nhwc_;
  // No VNNI (runtime/int8_exact.h): an s8 source goes in as u8 + 128; with weights
  // beyond 7 bits, parts_ holds the convolutions of both halves, writing int32
  // accumulators (NHWC) that run_halves sums and requantizes.
  bool shift_src_ = false, halves_ = false;
  std::vector<int32_t> acc_lo_, acc_hi_;
};

}  // namespace fx
