// SPDX-License-Identifier: Apache-2.0
#include "runtime/strided_copy.h"

#include <cstring>

#include "runtime/parallel.h"

namespace fx {

CopyRuns merge_copy_dims(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  CopyRuns r;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0) return {{0}, {1}};
    if (dims[d] == 1) continue;
    if (!r.dims.empty() && r.strides.back() == strides[d] * dims[d]) {
      r.dims.back() *= dims[d];
      r.strides.back() = strides[d];
    } else {
      r.dims.push_back(dims[d]);
      r.strides.push_back(strides[d]);
    }
  }
  return r;
}

void strided_copy(const std::byte* in, std::byte* out, const std::vector<int64_t>& dims_in,
                  const std::vector<int64_t>& strides_in, std::size_t es) {
  const CopyRuns runs = merge_copy_dims(dims_in, strides_in);
  const std::vector<int64_t>& dims = runs.dims;
  const std::vector<int64_t>& in_strides = runs.strides;
  const std::size_t r = dims.size();
  if (r == 0) {
    std::memcpy(out, in, es);
    return;
  }
  const int64_t inner = dims[r - 1], is = in_strides[r - 1];
  int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < r; ++i) rows *= dims[i];
  if (rows == 0 || inner == 0) return;
  parallel_for(rows, inner, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t off = 0, rem = row;
      for (std::size_t d = r - 1; d-- > 0;) {
        off += (rem % dims[d]) * in_strides[d];
        rem /= dims[d];
      }
      const std::byte* src = in + off * static_cast<int64_t>(es);
      std::byte* dst = out + row * inner * static_cast<int64_t>(es);
      if (is == 1) {
        std::memcpy(dst, src, static_cast<std::size_t>(inner) * es);
        continue;
      }
      auto loop = [&](auto tag) {
        using T = decltype(tag);
        const T* s = reinterpret_cast<const T*>(src);
        T* o = reinterpret_cast<T*>(dst);
        for (int64_t i = 0; i < inner; ++i) o[i] = s[i * is];
      };
      switch (es) {
        case 1: loop(uint8_t{}); break;
        case 2: loop(uint16_t{}); break;
        case 4: loop(uint32_t{}); break;
        case 8: loop(uint64_t{}); break;
        default:
          for (int64_t i = 0; i < inner; ++i) {
            std::memcpy(dst + i * static_cast<int64_t>(es), src + i * is * static_cast<int64_t>(es),
                        es);
          }
      }
    }
  });
}

}  // namespace fx
