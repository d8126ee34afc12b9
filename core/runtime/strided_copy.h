// SPDX-License-Identifier: Apache-2.0
#pragma once
// The copy that Slice, Tile and Transpose come down to: an n-d strided view of the
// input written out contiguously. Dims that stay adjacent in the input are merged
// first, so that a slice of whole planes (a channel range of a [1, C, H, W] tensor,
// as ShuffleNet's channel split takes) is one memcpy, not one per row of W.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fx {

struct CopyRuns {
  std::vector<int64_t> dims;     // output dims after merging, outermost first
  std::vector<int64_t> strides;  // input element stride of each
};

// Drops dims of size 1 and merges dim d into d + 1 where stride[d] equals
// stride[d + 1] * dims[d + 1] (the two walk the input as one). An empty result
// means one element; a zero dim is kept so that the copy sees nothing to do.
CopyRuns merge_copy_dims(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);

// Copies the view (dims, input element strides) of `in` into contiguous `out`;
// `es` bytes per element. The innermost run is a memcpy when its stride is 1.
void strided_copy(const std::byte* in, std::byte* out, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& in_strides, std::size_t es);

}  // namespace fx
