// SPDX-License-Identifier: Apache-2.0
#pragma once
// The channels-last paths (conv_path.h): NHWC activations through oneDNN with every
// post-op in oneDNN, as parts that run side by side on the runtime's pool
// (runtime/dnnl_parts.h). Tensors of a part's run: 0 source, 3 destination, 4 + b the
// b-th Binary operand. make_nhwc_conv_path (conv_path_nhwc.cc) picks how a single image
// is cut: over output rows (or a 1x1's pixels), over output channels, or as matmul
// column parts. Each builder returns null when oneDNN has no such primitive or the shape
// does not qualify.

#include <memory>
#include <utility>
#include <vector>

#include "fused_kernels/conv_path.h"

namespace fx {

// Parts that each write a span of the output in place.
class NhwcPartsPath : public ConvPath {
 public:
  // `spans`: per part, the output floats it writes (offset, count).
  NhwcPartsPath(std::vector<DnnlPart> parts, std::vector<std::pair<int64_t, int64_t>> spans,
                int sum_input)
      : parts_(std::move(parts)), spans_(std::move(spans)), sum_input_(sum_input) {}

  bool reads_nhwc() const override { return true; }
  std::size_t parts() const { return parts_.size(); }
  // The sum post-op accumulates into the destination: the residual goes there first,
  // reordered as a whole when it is NCHW, else copied by each part before it runs.
  void run(const ConvRunArgs& a) override;

 protected:
  // Part u; `copy_residual`: the residual is NHWC and not in the output's memory yet.
  virtual void run_one(std::size_t u, const ConvRunArgs& a, const std::vector<void*>& tensors,
                       bool copy_residual);

  std::vector<DnnlPart> parts_;
  std::vector<std::pair<int64_t, int64_t>> spans_;
  int sum_input_;
};

// Over output rows of a single image (several images: one part), or for a 1x1 stride-1
// convolution without padding over runs of pixels (conv_path_nhwc_rows.cc).
// `min_part_macs`: the least work a part gets (one part when the image has less than
// twice that).
std::unique_ptr<ConvPath> make_nhwc_rows_path(const ConvPrep& p, const std::vector<int64_t>& x,
                                              const ConvGeometry& geo, int threads,
                                              const dnnl::primitive_attr& attr,
                                              const std::vector<dnnl::memory::desc>& binary_mds,
                                              int64_t min_part_macs = int64_t{1} << 20);

// Over output channels, each part into a dense buffer of its own that it then copies
// into the output (conv_path_nhwc_channels.cc).
std::unique_ptr<ConvPath> make_nhwc_channels_path(
    const ConvPrep& p, const std::vector<int64_t>& x, const ConvGeometry& geo, int threads,
    const dnnl::primitive_attr& attr, const std::vector<dnnl::memory::desc>& binary_mds);

// A small 1x1 convolution with wide output as oneDNN matmuls over output channels
// (conv_path_pointwise_columns.cc).
std::unique_ptr<ConvPath> make_pointwise_columns_path(
    const ConvPrep& p, const std::vector<int64_t>& x, const ConvGeometry& geo,
    const std::vector<dnnl::memory::desc>& binary_mds, int threads, const dnnl::post_ops& po);

}  // namespace fx
