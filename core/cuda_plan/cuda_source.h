// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA C++ of every kernel a launch plan runs that is not a library call: its
// generated groups (codegen/cuda_emitter.h) and the data-movement kernels of
// copy_plan.h, as one translation unit that nvcc builds into a shared library.
//
// Entry points (host functions, all pointers on the device, return a cudaError_t):
//   <entry>_cuda(in, out, dims, stream)                  per generated group
//   fx_strided_copy(src, dst, rank, dims, src_strides, dst_strides,
//                   src_offset, dst_offset, elem_bytes, stream)
//   fx_gather(data, indices, out, outer, axis_len, count, inner,
//             elem_bytes, indices64, stream)
//   fx_compare(a, b, out, rank, dims, a_strides, b_strides, kind, type, stream)

#include <string>

#include "cuda_plan/launch_plan.h"

namespace fx::cuda {

std::string launch_plan_cuda_source(const LaunchPlan& plan);
// The data-movement kernels alone, and the comparisons.
std::string copy_kernels_cuda_source();
std::string compare_kernels_cuda_source();

}  // namespace fx::cuda
