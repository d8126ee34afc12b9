// SPDX-License-Identifier: Apache-2.0
#pragma once
// The data-movement ops on the GPU as strided copies: Transpose, Slice, Concat, Split
// and Expand are each one or more copies "dst[i] = src[offset + sum(i_d * stride_d)]",
// with every parameter fixed before running from the static shapes and the constant
// operands (starts, perm, ...). Gather is one kernel of its own with the same idea.
// run_strided_copy_host is the device kernel's loop on the host, so that the parameters
// are tested against the CPU runtime without a GPU.

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace fx::cuda {

inline constexpr int kMaxCopyRank = 8;  // the device kernel's array size

struct StridedCopy {
  ValueId src = kNoValue, dst = kNoValue;
  int64_t src_offset = 0, dst_offset = 0;         // elements
  std::vector<int64_t> dims;                      // of the copied block
  std::vector<int64_t> src_strides, dst_strides;  // elements, per dim
  int elem_bytes = 4;
  int64_t numel() const;
};

struct GatherCopy {
  ValueId data = kNoValue, indices = kNoValue, out = kNoValue;
  int64_t outer = 1, axis_len = 1, count = 1, inner = 1;
  int elem_bytes = 4;
  bool indices64 = true;  // int64 indices, else int32
};

// A comparison (Less, LessOrEqual, Greater, GreaterOrEqual, Equal) of two broadcast
// operands of one type (float32, int64 or int32) into a bool tensor: the causal mask of a
// decoder, computed from positions. Strides are 0 along broadcast axes.
struct CompareOp {
  enum Kind { Less, LessOrEqual, Greater, GreaterOrEqual, Equal } kind = Less;
  ValueId a = kNoValue, b = kNoValue, out = kNoValue;
  std::vector<int64_t> dims, a_strides, b_strides;  // of the output, elements
  int type = 0;                                     // 0 float32, 1 int64, 2 int32
};
bool is_comparison(const std::string& op_type);

// Throws fx::Error naming the node when a shape is not static or an operand that must be
// constant is not.
std::vector<StridedCopy> copy_plan(const Graph& graph, NodeId node);
GatherCopy gather_plan(const Graph& graph, NodeId node);
CompareOp compare_plan(const Graph& graph, NodeId node);

void run_strided_copy_host(const StridedCopy& c, const void* src, void* dst);
void run_gather_host(const GatherCopy& g, const void* data, const void* indices, void* out);
void run_compare_host(const CompareOp& c, const void* a, const void* b, void* out);

}  // namespace fx::cuda
