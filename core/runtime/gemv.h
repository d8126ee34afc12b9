// SPDX-License-Identifier: Apache-2.0
#pragma once
// y = alpha * W x (+ c): a matrix-vector product over row-major weights [n, k], for
// Gemm and MatMul with a single row on the left (a classifier head: MobileNetV2's
// 1280 x 1000). It is memory-bound (each weight is used once); oneDNN's matmul with
// M = 1 ran at about 40 GB/s on the bench machine, this loop streams the rows with
// eight independent FMA chains (four rows at a time, two vectors each), split over
// the runtime's pool.

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace fx {

// Floats that start on a cache line (64 bytes), for buffers read by whole-vector loads:
// std::vector's own storage starts 16 bytes past a line (malloc's header), so every
// 64-byte load of it spans two lines, and which of two copies of a buffer is slower
// depended on where the heap put it.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};
using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

// w: n rows of k floats (row j at w + j * k); c: n floats or null.
void gemv_rows(const float* x, const float* w, const float* c, float alpha, int64_t n, int64_t k,
               float* y);

// The same product over weights packed once (a recurrent layer's R, used every time
// step): blocks of 16 rows stored column by column, [n / 16][k][16], so that each
// x[i] scales 16 contiguous weights and no output needs a horizontal sum (which, for
// rows of a few hundred floats, cost about as much as the products). n must be a
// multiple of 16.
AlignedFloats pack_rows16(const float* w, int64_t n, int64_t k);
// y[0, 16 * blocks) = the blocks of `packed` (each k * 16 floats, as pack_rows16 lays
// them out) times x, on the calling thread.
void gemv_packed16(const float* x, const float* packed, int64_t k, int64_t blocks, float* y);

}  // namespace fx
