// SPDX-License-Identifier: Apache-2.0
#include "runtime/int8_exact.h"

#include <algorithm>
#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/quant_math.h"
#include "runtime/thread_pool.h"

namespace fx {

namespace {

// Rows per chunk of the parallel loops: enough work to be worth a pool wake-up.
int64_t chunk_rows(int64_t rows, int64_t cols, int threads) {
  const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cols));
  return std::max(min_rows, (rows + threads - 1) / std::max(1, threads));
}

template <class Store>
void for_rows(const HalvesEpilogue& e, int threads, Store&& store) {
  const int64_t step = chunk_rows(e.rows, e.cols, threads);
  const int64_t chunks = (e.rows + step - 1) / step;
  pool_run(chunks, threads, [&](int64_t ch) {
    const int64_t r1 = std::min(e.rows, (ch + 1) * step);
    for (int64_t r = ch * step; r < r1; ++r) {
      // Where column c of row r goes in y: row-major, or planar per image.
      const int64_t base =
          e.plane == 0 ? r * e.cols : (r / e.plane) * e.cols * e.plane + r % e.plane;
      const int64_t stride = e.plane == 0 ? 1 : e.plane;
      for (int64_t c = 0; c < e.cols; ++c) store(r * e.cols + c, c, base + c * stride);
    }
  });
}

}  // namespace

bool onednn_int8_dot_exact() {
  static const bool exact = [] {
    using isa = dnnl::cpu_isa;
    switch (dnnl::get_effective_cpu_isa()) {
      case isa::avx2_vnni:
      case isa::avx512_core_vnni:
      case isa::avx512_core_bf16:
      case isa::avx512_core_amx: return true;
      default: return false;  // incl. an ISA this oneDNN names but we do not know: the exact way
    }
  }();
  return exact;
}

bool fits_7bit(const std::vector<int32_t>& w) {
  return std::all_of(w.begin(), w.end(), [](int32_t v) { return v >= -64 && v <= 64; });
}

WeightHalves split_weights_7bit(const std::vector<int32_t>& w) {
  WeightHalves h;
  h.lo.reserve(w.size());
  h.hi.reserve(w.size());
  for (int32_t v : w) {
    const int32_t lo = v >> 1;  // floor(v / 2): [-64, 63] for v in [-128, 127]
    h.lo.push_back(static_cast<int8_t>(lo));
    h.hi.push_back(static_cast<int8_t>(v - lo));  // ceil(v / 2): [-64, 64]
  }
  return h;
}

void shift_s8_to_u8(const void* src, void* dst, int64_t n, int threads) {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  const int64_t step = std::max<int64_t>(65536, (n + threads - 1) / std::max(1, threads));
  pool_run((n + step - 1) / step, threads, [&](int64_t ch) {
    const int64_t end = std::min(n, (ch + 1) * step);
    // Two's complement: flipping the sign bit adds 128 modulo 256.
    for (int64_t i = ch * step; i < end; ++i) d[i] = static_cast<uint8_t>(s[i] ^ 0x80u);
  });
}

void store_halves(const HalvesEpilogue& e, const int32_t* lo, const int32_t* hi, void* y,
                  int threads) {
  const bool has_bias = e.bias && !e.bias->empty();
  const float* bias = has_bias ? e.bias->data() : nullptr;
  const bool per_col = e.scales && e.scales->size() > 1;
  const float* scales = e.scales && !e.scales->empty() ? e.scales->data() : nullptr;
  auto total = [&](int64_t i, int64_t c) {
    return double(int64_t{lo[i]} + hi[i]) + (bias ? double(bias[c]) : 0.0);
  };
  auto scale = [&](int64_t c) { return scales ? scales[per_col ? c : 0] : 1.f; };
  switch (e.y_type) {
    case DType::Int32: {
      auto* out = static_cast<int32_t*>(y);
      for_rows(e, threads, [&](int64_t i, int64_t c, int64_t o) {
        out[o] = static_cast<int32_t>(total(i, c));
      });
      break;
    }
    case DType::Float32: {
      auto* out = static_cast<float*>(y);
      for_rows(e, threads, [&](int64_t i, int64_t c, int64_t o) {
        out[o] = static_cast<float>(total(i, c)) * scale(c);
      });
      break;
    }
    default:
      for_rows(e, threads, [&](int64_t i, int64_t c, int64_t o) {
        store_accumulated(e.y_type, y, o, total(i, c), scale(c), e.relu, e.y_zero_point);
      });
  }
}

}  // namespace fx
