// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/cuda_source.h"

#include "codegen/cuda_emitter.h"

namespace fx::cuda {

std::string copy_kernels_cuda_source() {
  return R"(
// ---- data movement (cuda_plan/copy_plan.h)
struct FxCopy {
  int64_t dims[8], ss[8], ds[8];
  int64_t so, dof;
  int rank;
};
template <class T>
__global__ void fx_copy_kernel(const T* __restrict__ s, T* __restrict__ d, FxCopy c, int64_t n) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = t, so = c.so, dof = c.dof;
    for (int k = c.rank - 1; k >= 0; --k) {
      const int64_t i = rem % c.dims[k];
      rem /= c.dims[k];
      so += i * c.ss[k];
      dof += i * c.ds[k];
    }
    d[dof] = s[so];
  }
}
template <class T>
static void fx_copy_launch(const void* s, void* d, const FxCopy& c, int64_t n, cudaStream_t st) {
  const int64_t blocks = std::min<int64_t>((n + 255) / 256, 65535 * 8);
  fx_copy_kernel<T><<<(unsigned)blocks, 256, 0, st>>>((const T*)s, (T*)d, c, n);
}
extern "C" int fx_strided_copy(const void* src, void* dst, int rank, const int64_t* dims,
                               const int64_t* src_strides, const int64_t* dst_strides,
                               int64_t src_offset, int64_t dst_offset, int elem_bytes,
                               void* stream) {
  if (rank < 0 || rank > 8) return (int)cudaErrorInvalidValue;
  FxCopy c{};
  int64_t n = 1;
  for (int k = 0; k < rank; ++k) {
    c.dims[k] = dims[k];
    c.ss[k] = src_strides[k];
    c.ds[k] = dst_strides[k];
    n *= dims[k];
  }
  c.rank = rank;
  c.so = src_offset;
  c.dof = dst_offset;
  if (n <= 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  switch (elem_bytes) {
    case 1: fx_copy_launch<unsigned char>(src, dst, c, n, st); break;
    case 2: fx_copy_launch<unsigned short>(src, dst, c, n, st); break;
    case 4: fx_copy_launch<unsigned int>(src, dst, c, n, st); break;
    case 8: fx_copy_launch<unsigned long long>(src, dst, c, n, st); break;
    default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}

template <class T, class I>
__global__ void fx_gather_kernel(const T* __restrict__ s, const I* __restrict__ idx,
                                 T* __restrict__ d, int64_t outer, int64_t len, int64_t count,
                                 int64_t inner) {
  const int64_t n = outer * count * inner;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t k = t % inner, i = (t / inner) % count, o = t / (inner * count);
    int64_t j = (int64_t)idx[i];
    if (j < 0) j += len;
    d[t] = s[(o * len + j) * inner + k];
  }
}
template <class T>
static void fx_gather_launch(const void* s, const void* idx, void* d, int64_t outer, int64_t len,
                             int64_t count, int64_t inner, int i64, cudaStream_t st) {
  const int64_t n = outer * count * inner;
  const int64_t blocks = std::min<int64_t>((n + 255) / 256, 65535 * 8);
  if (i64)
    fx_gather_kernel<T, long long><<<(unsigned)blocks, 256, 0, st>>>(
        (const T*)s, (const long long*)idx, (T*)d, outer, len, count, inner);
  else
    fx_gather_kernel<T, int><<<(unsigned)blocks, 256, 0, st>>>((const T*)s, (const int*)idx,
                                                               (T*)d, outer, len, count, inner);
}
extern "C" int fx_gather(const void* data, const void* indices, void* out, int64_t outer,
                         int64_t axis_len, int64_t count, int64_t inner, int elem_bytes,
                         int indices64, void* stream) {
  if (outer * count * inner <= 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  switch (elem_bytes) {
    case 1: fx_gather_launch<unsigned char>(data, indices, out, outer, axis_len, count, inner, indices64, st); break;
    case 2: fx_gather_launch<unsigned short>(data, indices, out, outer, axis_len, count, inner, indices64, st); break;
    case 4: fx_gather_launch<unsigned int>(data, indices, out, outer, axis_len, count, inner, indices64, st); break;
    case 8: fx_gather_launch<unsigned long long>(data, indices, out, outer, axis_len, count, inner, indices64, st); break;
    default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}
)";
}

std::string compare_kernels_cuda_source() {
  return R"(
// ---- comparisons into bool (cuda_plan/copy_plan.h CompareOp)
struct FxCompare {
  int64_t dims[8], as[8], bs[8];
  int rank, kind;
};
template <class T>
__global__ void fx_compare_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                  unsigned char* __restrict__ out, FxCompare c, int64_t n) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = t, ia = 0, ib = 0;
    for (int k = c.rank - 1; k >= 0; --k) {
      const int64_t i = rem % c.dims[k];
      rem /= c.dims[k];
      ia += i * c.as[k];
      ib += i * c.bs[k];
    }
    const T x = a[ia], y = b[ib];
    bool r = c.kind == 0 ? x < y : c.kind == 1 ? x <= y : c.kind == 2 ? x > y
           : c.kind == 3 ? x >= y : x == y;
    out[t] = r ? 1 : 0;
  }
}
extern "C" int fx_compare(const void* a, const void* b, void* out, int rank, const int64_t* dims,
                          const int64_t* a_strides, const int64_t* b_strides, int kind, int type,
                          void* stream) {
  if (rank < 0 || rank > 8) return (int)cudaErrorInvalidValue;
  FxCompare c{};
  int64_t n = 1;
  for (int k = 0; k < rank; ++k) {
    c.dims[k] = dims[k];
    c.as[k] = a_strides[k];
    c.bs[k] = b_strides[k];
    n *= dims[k];
  }
  c.rank = rank;
  c.kind = kind;
  if (n <= 0) return 0;
  const int64_t blocks = std::min<int64_t>((n + 255) / 256, 65535 * 8);
  cudaStream_t st = (cudaStream_t)stream;
  unsigned char* o = (unsigned char*)out;
  if (type == 0)
    fx_compare_kernel<float><<<(unsigned)blocks, 256, 0, st>>>((const float*)a, (const float*)b, o, c, n);
  else if (type == 1)
    fx_compare_kernel<long long><<<(unsigned)blocks, 256, 0, st>>>((const long long*)a, (const long long*)b, o, c, n);
  else
    fx_compare_kernel<int><<<(unsigned)blocks, 256, 0, st>>>((const int*)a, (const int*)b, o, c, n);
  return (int)cudaGetLastError();
}
)";
}

std::string launch_plan_cuda_source(const LaunchPlan& plan) {
  std::vector<LoweredGroup> unique;
  for (const LoweredGroup* lg : plan.unique_generated()) unique.push_back(*lg);
  return emit_cuda_source(unique) + copy_kernels_cuda_source() + compare_kernels_cuda_source();
}

}  // namespace fx::cuda
