// SPDX-License-Identifier: Apache-2.0
#pragma once
// Resize over the two innermost axes (NCHW's height and width; every leading axis is a
// plane): the case of the upsampling and downsampling in segmentation heads, detectors
// and FPNs. resize_kernels.cc builds the per-axis tables (ONNX's coordinate modes) and
// hands planes here when no other axis changes and no output falls outside the input.
//
// Work is split over (plane, output row) pairs. Nearest: each output row gathers one
// source row through the column table, or copies the previous output row when both
// read the same source row (integer upscaling). Linear: the two source rows an output
// row blends are first interpolated along the width into row buffers that the next
// output rows reuse (an upscaled row pair serves several output rows), then blended.
// Other modes (cubic) slot in as a further function over the same tables.

#include <cstdint>
#include <vector>

namespace fx {

// One axis: output coordinate -> source indices i0, i1 and the weight of i1.
struct ResizeAxisTable {
  std::vector<int32_t> i0, i1;
  std::vector<float> w;  // linear only (empty for nearest)
};

// in: planes x in_h x in_w floats, out: planes x rows.i0.size() x cols.i0.size().
void resize_planes_nearest(const float* in, float* out, int64_t planes, int64_t in_h, int64_t in_w,
                           const ResizeAxisTable& rows, const ResizeAxisTable& cols);
void resize_planes_linear(const float* in, float* out, int64_t planes, int64_t in_h, int64_t in_w,
                          const ResizeAxisTable& rows, const ResizeAxisTable& cols);

}  // namespace fx
