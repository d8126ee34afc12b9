// SPDX-License-Identifier: Apache-2.0
#include "runtime/int8_exact.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/fast_math.h"  // FX_VECTOR_CLONES
#include "runtime/quant_math.h"
#include "runtime/thread_pool.h"

namespace fx {

namespace {

// A run of n accumulators lo[i * stride] + hi[i * stride] of one output channel (a
// column of a planar image tile) or of one row (one channel each: bias and scale step
// along with i). Written so that the loops vectorize; hot, so with an AVX2 clone.
struct Run {
  const int32_t *lo, *hi;
  int64_t stride, n;
  const float *bias, *scale;  // bias never null (a zero when absent)
  int64_t bias_step, scale_step;
};

// Requantized to 8 bits as store_accumulated does: (acc + bias) * scale, Relu, round
// half to even (adding and taking away 1.5 * 2^23 rounds so, vectorized; a value too
// large for it is far outside the 8-bit range and saturates anyway), zero point, clamp.
FX_VECTOR_CLONES
void requant_run(const Run& r, float zp, float qmin, float qmax, float floor_v, int32_t* q) {
  const float magic = 12582912.0f;
  for (int64_t i = 0; i < r.n; ++i) {
    const int32_t acc = r.lo[i * r.stride] + r.hi[i * r.stride];
    float v = (static_cast<float>(acc) + r.bias[i * r.bias_step]) * r.scale[i * r.scale_step];
    v = std::max(v, floor_v);
    const float rounded = (v + magic) - magic + zp;
    q[i] = static_cast<int32_t>(std::min(std::max(rounded, qmin), qmax));
  }
}

FX_VECTOR_CLONES
void scale_run(const Run& r, float* out) {
  for (int64_t i = 0; i < r.n; ++i) {
    const double total =
        double(int64_t{r.lo[i * r.stride]} + r.hi[i * r.stride]) + double(r.bias[i * r.bias_step]);
    out[i] = static_cast<float>(total) * r.scale[i * r.scale_step];
  }
}

void int_run(const Run& r, int32_t* out) {
  for (int64_t i = 0; i < r.n; ++i) {
    const double total =
        double(int64_t{r.lo[i * r.stride]} + r.hi[i * r.stride]) + double(r.bias[i * r.bias_step]);
    out[i] = static_cast<int32_t>(total);
  }
}

// Rows per chunk of the parallel loops: enough work to be worth a pool wake-up.
int64_t chunk_rows(int64_t rows, int64_t cols, int threads) {
  const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cols));
  return std::max(min_rows, (rows + threads - 1) / std::max(1, threads));
}

// Pixels per tile of a planar output: the tile's accumulators (both halves, all
// channels) stay in cache while each channel's run of pixels is written contiguously.
constexpr int64_t kTilePixels = 128;

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

std::vector<std::vector<int8_t>> int8_weight_sets(const std::vector<int32_t>& w, bool halves) {
  if (!halves) return {std::vector<int8_t>(w.begin(), w.end())};
  auto h = split_weights_7bit(w);
  std::vector<std::vector<int8_t>> sets;
  sets.push_back(std::move(h.lo));
  sets.push_back(std::move(h.hi));
  return sets;
}

void append_weight_set_parts(const dnnl::primitive_desc_base& pd,
                             const std::vector<std::pair<int, dnnl::memory::desc>>& descs,
                             const std::vector<DnnlPart::Bind>& binds,
                             const std::vector<int>& dst_tensors, const dnnl::memory::desc& user_w,
                             const std::vector<std::vector<int8_t>>& weight_sets,
                             std::vector<dnnl::memory>& shared_w, std::vector<DnnlPart>& parts) {
  for (std::size_t h = 0; h < weight_sets.size(); ++h) {
    std::vector<DnnlPart::Bind> set_binds = binds;
    for (auto& b : set_binds)
      if (b.arg == DNNL_ARG_DST) b.tensor = dst_tensors[h];
    DnnlPart part = make_part(pd, descs, std::move(set_binds));
    if (!shared_w[h] || shared_w[h].get_desc() != pd.weights_desc())
      shared_w[h] = reorder_weights(user_w, weight_sets[h].data(), pd.weights_desc());
    part.args[DNNL_ARG_WEIGHTS] = shared_w[h];
    parts.push_back(std::move(part));
  }
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
  static const float zero = 0.f, one = 1.f;
  const bool has_bias = e.bias && !e.bias->empty();
  const bool has_scales = e.scales && !e.scales->empty() && e.y_type != DType::Int32;
  const bool per_col = has_scales && e.scales->size() > 1;
  const float* bias = has_bias ? e.bias->data() : &zero;
  const float* scales = has_scales ? e.scales->data() : &one;
  const bool eight_bit = is_int8_type(e.y_type);
  const float qmin = e.y_type == DType::UInt8 ? 0.f : -128.f;
  const float qmax = e.y_type == DType::UInt8 ? 255.f : 127.f;
  const float floor_v = e.relu ? 0.f : -std::numeric_limits<float>::infinity();
  const int64_t es = static_cast<int64_t>(dtype_size(e.y_type));
  auto* out = static_cast<std::byte*>(y);

  // One run into y at element `at`: requantized, scaled or as integers.
  auto emit = [&](const Run& r, int64_t at, std::vector<int32_t>& q) {
    if (eight_bit) {
      q.resize(static_cast<std::size_t>(r.n));
      requant_run(r, static_cast<float>(e.y_zero_point), qmin, qmax, floor_v, q.data());
      if (e.y_type == DType::UInt8) {
        auto* d = reinterpret_cast<uint8_t*>(out) + at;
        for (int64_t i = 0; i < r.n; ++i) d[i] = static_cast<uint8_t>(q[i]);
      } else {
        auto* d = reinterpret_cast<int8_t*>(out) + at;
        for (int64_t i = 0; i < r.n; ++i) d[i] = static_cast<int8_t>(q[i]);
      }
    } else if (e.y_type == DType::Float32) {
      scale_run(r, reinterpret_cast<float*>(out + at * es));
    } else {
      int_run(r, reinterpret_cast<int32_t*>(out + at * es));
    }
  };

  if (e.plane == 0) {
    // Row-major output: each row is one run along the channels.
    const int64_t step = chunk_rows(e.rows, e.cols, threads);
    pool_run((e.rows + step - 1) / step, threads, [&](int64_t ch) {
      std::vector<int32_t> q;
      for (int64_t r = ch * step; r < std::min(e.rows, (ch + 1) * step); ++r) {
        Run run{lo + r * e.cols,  hi + r * e.cols, 1, e.cols, bias, scales,
                has_bias ? 1 : 0, per_col ? 1 : 0};
        emit(run, r * e.cols, q);
      }
    });
    return;
  }
  // Planar output: tiles of pixels within one image; per channel, one run of the tile.
  const int64_t images = e.rows / e.plane, tiles = (e.plane + kTilePixels - 1) / kTilePixels;
  pool_run(images * tiles, threads, [&](int64_t t) {
    std::vector<int32_t> q;
    const int64_t img = t / tiles, p0 = (t % tiles) * kTilePixels;
    const int64_t n = std::min(kTilePixels, e.plane - p0);
    const int64_t first = (img * e.plane + p0) * e.cols;
    for (int64_t c = 0; c < e.cols; ++c) {
      Run run{lo + first + c,
              hi + first + c,
              e.cols,
              n,
              bias + (has_bias ? c : 0),
              scales + (per_col ? c : 0),
              0,
              0};
      emit(run, (img * e.cols + c) * e.plane + p0, q);
    }
  });
}

}  // namespace fx
