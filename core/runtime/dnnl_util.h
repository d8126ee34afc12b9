// SPDX-License-Identifier: Apache-2.0
#pragma once
// The oneDNN engine and stream the runtime shares, and memory helpers.

#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "runtime/tensor.h"

namespace fx {

dnnl::engine& dnnl_engine();
// One stream per calling thread (oneDNN's OpenMP runtime fans out inside).
dnnl::stream& dnnl_stream();
// Plain row-major ("abcd...") f32 memory descriptor for dims.
dnnl::memory::desc plain_f32_desc(const std::vector<int64_t>& dims);
dnnl::memory::dims to_dnnl(const std::vector<int64_t>& dims);
// oneDNN's type for a uint8, int8, int32 or float32 tensor of the integer kernels
// (int8_conv, int8_matmul); throws Error naming `what` for any other type.
dnnl::memory::data_type integer_kernel_type(DType t, const char* what);
// Inference convolution descriptor; oneDNN has one constructor with a bias and one
// without, `bias` null picks the latter.
dnnl::convolution_forward::desc conv_forward_desc(
    const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
    const dnnl::memory::desc* bias, const dnnl::memory::desc& dst,
    const dnnl::memory::dims& strides, const dnnl::memory::dims& dilation,
    const dnnl::memory::dims& pad_l, const dnnl::memory::dims& pad_r);

}  // namespace fx
