// SPDX-License-Identifier: Apache-2.0
#pragma once
// Numpy broadcasting as rows: the output is viewed as `outer` rows of `inner`
// contiguous elements, and every input advances by 0 or 1 per inner element, so the
// inner loops are tight loops over contiguous memory that the compiler vectorizes.
// Adjacent dims that broadcast the same way in every input are merged first, so
// [N,C,H,W] + [1,C,1,1] becomes rows of H*W elements with a per-row scalar.

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/tensor.h"
#include "util/error.h"

namespace fx {

template <std::size_t K>
struct BroadcastRows {
  std::vector<int64_t> out_dims;
  int64_t outer = 1;
  int64_t inner = 1;
  std::array<int64_t, K> inner_stride{};  // 0 or 1
  // Collapsed outer dims (excluding the inner one) and each input's stride there.
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, K> strides;

  explicit BroadcastRows(const std::array<const std::vector<int64_t>*, K>& in);
  // Element offset of row r in each input.
  void row_offsets(int64_t r, std::array<int64_t, K>& off) const {
    off.fill(0);
    for (std::size_t d = dims.size(); d-- > 0;) {
      int64_t i = r % dims[d];
      r /= dims[d];
      for (std::size_t k = 0; k < K; ++k) off[k] += i * strides[k][d];
    }
  }
};

template <std::size_t K>
BroadcastRows<K>::BroadcastRows(const std::array<const std::vector<int64_t>*, K>& in) {
  std::size_t rank = 0;
  for (auto* s : in) rank = std::max(rank, s->size());
  out_dims.assign(rank, 1);
  std::array<std::vector<int64_t>, K> padded;
  for (std::size_t k = 0; k < K; ++k) {
    padded[k].assign(rank - in[k]->size(), 1);
    padded[k].insert(padded[k].end(), in[k]->begin(), in[k]->end());
    for (std::size_t i = 0; i < rank; ++i) {
      int64_t d = padded[k][i];
      if (d == out_dims[i] || d == 1) continue;
      if (out_dims[i] == 1) {
        out_dims[i] = d;
        continue;
      }
      std::string msg = "shapes cannot broadcast:";
      // append, not " " + s: GCC 12 warns -Wrestrict on that (a false positive).
      for (auto* x : in) msg.append(" ").append(dims_str(*x));
      throw Error(msg);
    }
  }
  // Merge dims (skipping size-1 output dims) into groups where each input is
  // either full or broadcast across the whole group.
  std::vector<int64_t> gdims;
  std::array<std::vector<int64_t>, K> gfull;  // 1 full, 0 broadcast
  for (std::size_t i = 0; i < rank; ++i) {
    if (out_dims[i] == 1) continue;
    std::array<int64_t, K> full;
    for (std::size_t k = 0; k < K; ++k) full[k] = padded[k][i] == out_dims[i] ? 1 : 0;
    bool same = !gdims.empty();
    for (std::size_t k = 0; k < K && same; ++k) same = gfull[k].back() == full[k];
    if (same) {
      gdims.back() *= out_dims[i];
    } else {
      gdims.push_back(out_dims[i]);
      for (std::size_t k = 0; k < K; ++k) gfull[k].push_back(full[k]);
    }
  }
  if (gdims.empty()) {
    gdims.push_back(1);
    for (std::size_t k = 0; k < K; ++k) gfull[k].push_back(1);
  }
  // Strides per group for each input (in its own contiguous layout).
  std::size_t g = gdims.size();
  for (std::size_t k = 0; k < K; ++k) {
    strides[k].assign(g, 0);
    int64_t s = 1;
    for (std::size_t j = g; j-- > 0;) {
      if (gfull[k][j]) {
        strides[k][j] = s;
        s *= gdims[j];
      }
    }
  }
  inner = gdims.back();
  for (std::size_t k = 0; k < K; ++k) inner_stride[k] = strides[k].back() ? 1 : 0;
  dims.assign(gdims.begin(), gdims.end() - 1);
  for (std::size_t k = 0; k < K; ++k) strides[k].pop_back();
  outer = 1;
  for (int64_t d : dims) outer *= d;
}

}  // namespace fx
