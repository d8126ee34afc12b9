// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a fused Conv kernel (fused_conv_kernel.h) computes: one ConvPath per execution
// path, chosen by the kernel when it first meets an input's dims (and again when they
// change), in this order of preference:
//
//   depthwise          our direct loops (a depthwise Conv with our own epilogue): NHWC
//                      (depthwise_nhwc.h, the epilogue on each row while in cache) when a
//                      tensor of it is NHWC, else the runtime's NCHW loop and our epilogue
//                      pass                                       (conv_path_depthwise.cc)
//   winograd           oneDNN's Winograd convolution for a 3x3 stride-1 Conv without
//                      Binary post-ops, in the tensors' own layouts (conv_path_winograd.cc)
//   channels-last      NHWC activations through oneDNN's brgemm convolutions with every
//                      post-op in oneDNN (applied in registers), taken when the layout plan
//                      keeps the input or output NHWC, or for an NCHW kernel larger than
//                      1x1 where oneDNN prefers NHWC (the input and output are then
//                      reordered around it). A single image runs as parts side by side on
//                      the runtime's pool (runtime/dnnl_parts.h), cut one of three ways
//                      (conv_path_nhwc.cc picks):
//       rows           over output rows, or a 1x1's pixels    (conv_path_nhwc_rows.cc)
//       channels       a map of few rows (7x7) over output channels, each part into its
//                      own buffer                             (conv_path_nhwc_channels.cc)
//       columns        a small 1x1 with wide output as matmuls over output channels
//                                                             (conv_path_pointwise_columns.cc)
//   plain              NCHW in and out. Without Binary post-ops: the convolution as parts
//                      over the pool (runtime/conv_parts.h: channels-last inside where
//                      oneDNN prefers it, grouped and 3-D ones included, else split over
//                      output channels or groups), then the bias and epilogue as our own
//                      pass (conv_epilogue.h), much cheaper than oneDNN's post-ops on its
//                      gemm convolution. With them: one oneDNN primitive
//                                                                   (conv_path_plain.cc)
//
// FX_CONV_PLAIN=1 forces the plain path (and no channels-last plan) for comparisons.
// A channels-last convolution too small to be cut by the rows path's work rule is timed
// on its first run as one part and as one part per thread, and keeps the faster
// (make_split_candidate); FX_CONV_SPLIT=split or =one skips the timing.
// The kernel converts tensors whose layout is not the path's own (LayoutConversion).

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fused_kernels/conv_prep.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "runtime/depthwise_conv.h"
#include "runtime/dnnl_parts.h"
#include "runtime/kernel.h"
#include "runtime/tensor.h"

namespace fx {

// Output dims and oneDNN's stride, dilation (counted from 0) and paddings of a Conv on
// input dims `x`.
struct ConvGeometry {
  std::vector<int64_t> out;
  dnnl::memory::dims st, dil, pl, pr;
};
ConvGeometry conv_geometry(const ConvPrep& p, const std::vector<int64_t>& x);

// A float buffer owned by a kernel, grown on demand.
float* scratch(std::vector<float>& v, int64_t n);

// A conversion of one [n, c, h, w] tensor between NCHW and NHWC (tensor 0 -> tensor 3)
// as parts (a single image's rows split over threads), with a buffer for the converted
// copy.
struct LayoutConversion {
  std::vector<DnnlPart> parts;
  std::vector<float> buffer;

  void build(const std::vector<int64_t>& dims, bool to_nhwc, int threads);
  void clear() { parts.clear(); }
  void run(const void* from, void* to, int threads);
  // `t` converted into the buffer.
  const void* into_buffer(const Tensor& t, int threads);
};

// What a path's run gets from the kernel.
struct ConvRunArgs {
  KernelContext& ctx;
  const ConvLayouts& layouts;  // of the step's tensors
  const void* x;               // the input, in the path's layout
  const Tensor* residual;      // the Sum operand as the step holds it, or null
  void* out;                   // where the path writes, in its output layout
  bool in_place;               // out is x's memory (ConvPath::can_run_in_place)
  int threads;
  LayoutConversion& residual_convert;  // the residual into the path's layout, when needed
};

class ConvPath {
 public:
  virtual ~ConvPath() = default;
  // The memory order of the input (and residual) it reads, and of the output it writes.
  virtual bool reads_nhwc() const = 0;
  virtual bool writes_nhwc() const { return reads_nhwc(); }
  // Reads and writes every layout itself: the kernel converts nothing around it.
  virtual bool converts_layouts() const { return false; }
  // May write its output over its input (ConvRunArgs::in_place), without a residual.
  virtual bool can_run_in_place() const { return false; }
  virtual void run(const ConvRunArgs& a) = 0;
};

// The paths; each factory returns null where its path does not apply. `operands`: the
// dims of the step's inputs after x (the Binary and Sum operands, in post-op order).
using OperandDims = std::vector<std::vector<int64_t>>;
std::unique_ptr<ConvPath> make_depthwise_conv_path(const ConvPrep& p, const ConvLayouts& lay,
                                                   const std::vector<int64_t>& x,
                                                   const ConvGeometry& geo);
std::unique_ptr<ConvPath> make_winograd_conv_path(const ConvPrep& p, const ConvLayouts& lay,
                                                  const std::vector<int64_t>& x,
                                                  const ConvGeometry& geo,
                                                  const OperandDims& operands, int threads);
std::unique_ptr<ConvPath> make_nhwc_conv_path(const ConvPrep& p, const ConvLayouts& lay,
                                              const std::vector<int64_t>& x,
                                              const ConvGeometry& geo, const OperandDims& operands,
                                              int threads);
// A second way to run what `chosen` runs, for the kernel to time against it on first
// use: where the channels-last rows path left a single image in one part for want of
// work, the same cut into one part per thread. Whether waking a worker pays for a
// convolution of a few microseconds is a fact of the machine (and its load), so it is
// measured, not assumed. Null where there is no such alternative.
std::unique_ptr<ConvPath> make_split_candidate(const ConvPrep& p, const std::vector<int64_t>& x,
                                               const ConvGeometry& geo, const OperandDims& operands,
                                               int threads, const ConvPath& chosen);
std::unique_ptr<ConvPath> make_plain_conv_path(const ConvPrep& p, const std::vector<int64_t>& x,
                                               const ConvGeometry& geo, const OperandDims& operands,
                                               int threads);

// The depthwise loops' shape of a depthwise Conv (conv_layout_costs.h:
// runs_depthwise_path) on input dims `x`.
DepthwiseShape depthwise_shape(const ConvPrep& p, const std::vector<int64_t>& x,
                               const ConvGeometry& geo);

// Shared by the paths.
dnnl::algorithm conv_post_op_algorithm(const std::string& alg);
dnnl::memory::desc nhwc_md(const std::vector<int64_t>& d);
// A grouped 2-D convolution (not depthwise) on NHWC input dims `x` for which oneDNN has
// a native channels-last kernel (neither its reference nor its gemm one): the layout
// plan may then keep its tensors NHWC (conv_prep.h), and the channels-last path runs
// it without the reorders of the plain path's blocked or channels-last parts.
bool grouped_nhwc_native(const ConvPrep& p, const std::vector<int64_t>& x);
// The post-ops of the channels-last convolution: all but the folded ones, in order; the
// descriptors of the Binary operands' memory go to `binary_mds`.
dnnl::post_ops nhwc_post_ops(const ConvPrep& p, const OperandDims& operands,
                             std::vector<dnnl::memory::desc>& binary_mds);
// Index among the primitive's post-ops of the b-th Binary one.
int binary_post_op_index(const ConvPrep& p, std::size_t b);
// Our epilogue pass over the output y (dims `d`), adding `bias` when given.
void apply_conv_epilogue(const ConvPrep& p, const std::vector<int64_t>& d, float* y,
                         const float* bias, const std::vector<const float*>& res);

}  // namespace fx
