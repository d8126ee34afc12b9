// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel of a "pointwise_depthwise" group (analysis/pointwise_depthwise.h): a 1x1
// Conv (+ Relu/Clip) whose output feeds only a depthwise Conv (+ Relu/Clip), run so
// that the expanded tensor never exists whole. Each thread owns a contiguous band of
// output rows and walks it in chunks: oneDNN's channels-last 1x1 convolution (its
// activation as a post-op) writes the input rows a chunk needs into a small buffer of
// the thread's (about 192 KiB, inside its L2), the rows the previous chunk already
// expanded are moved to the front instead of recomputed, and the depthwise loop of
// fused_kernels/depthwise_nhwc.h reads them there and applies its clamp in registers.
//
// Activations are NHWC inside; the step's input and output are NHWC or NCHW as the
// layout plan (plan_conv_layouts) says, converted at the edges when NCHW.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/pointwise_depthwise.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

// Constant data of a group, shared by its layout variants.
struct PointwiseDepthwisePrep {
  std::string name;  // the pointwise Conv's
  PointwiseDepthwise match;
  int64_t ci = 0, ce = 0;           // input and expanded channels
  std::vector<float> pw_w, pw_b;    // [ce, ci], [ce]
  std::vector<float> dw_w, dw_b;    // [ce, 1, kh, kw], [ce]
  std::vector<int64_t> dw_kernel;   // kh, kw
  std::vector<int64_t> dw_strides;  // sh, sw
  std::vector<int64_t> dw_pads;     // top, left, bottom, right
  // Expanded bytes per chunk; 0: the default (a band expanded whole when it fits in
  // L2, else chunks of ~384 KiB). Tests set it small to get many chunks on small maps.
  int64_t chunk_bytes = 0;
};

// nullopt with `why` when `nodes` (topological order) are not exactly such a chain.
std::optional<PointwiseDepthwise> plan_pointwise_depthwise(const Graph& g,
                                                           const std::vector<NodeId>& nodes,
                                                           std::string* why);
std::shared_ptr<const PointwiseDepthwisePrep> prepare_pointwise_depthwise(
    const Graph& g, const PointwiseDepthwise& m);

// Step inputs: {match.x}; output: match.out. `x_nhwc`/`out_nhwc`: memory order of the
// step's input and output (dims stay NCHW).
std::shared_ptr<Kernel> make_pointwise_depthwise_kernel(
    std::shared_ptr<const PointwiseDepthwisePrep> prep, bool x_nhwc = false, bool out_nhwc = false);

// For the layout plan: the prep and layouts of such a kernel, or null.
const PointwiseDepthwisePrep* pointwise_depthwise_prep(const Kernel& k, bool* x_nhwc,
                                                       bool* out_nhwc);
std::shared_ptr<const PointwiseDepthwisePrep> shared_pointwise_depthwise_prep(const Kernel& k);

}  // namespace fx
