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

}  // namespace fx
