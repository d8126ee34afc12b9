// SPDX-License-Identifier: Apache-2.0
#include "runtime/int8_matmul.h"

#include <algorithm>

#include "runtime/dnnl_util.h"
#include "runtime/int8_exact.h"
#include "runtime/quant_math.h"
#include "util/error.h"

namespace fx {

namespace {
using dt = dnnl::memory::data_type;
}  // namespace

Int8MatMul::Int8MatMul(Int8MatMulSpec spec, int threads) : s_(std::move(spec)) {
  if (s_.m < 0 || s_.k < 0 || s_.n < 0 || static_cast<int64_t>(s_.b.size()) != s_.k * s_.n) {
    throw Error("int8 matmul: weight values do not match [" + std::to_string(s_.k) + "," +
                std::to_string(s_.n) + "]");
  }
  if (!is_int8_type(s_.a_type)) throw Error("int8 matmul: input must be uint8 or int8");
  if (!s_.bias.empty() && static_cast<int64_t>(s_.bias.size()) != s_.n) {
    throw Error("int8 matmul: bias of " + std::to_string(s_.bias.size()) + " values for " +
                std::to_string(s_.n) + " columns");
  }
  if (s_.y_type != DType::Int32 && s_.scales.size() != 1 &&
      static_cast<int64_t>(s_.scales.size()) != s_.n) {
    throw Error("int8 matmul: " + std::to_string(s_.scales.size()) + " scales for " +
                std::to_string(s_.n) + " columns");
  }
  integer_kernel_type(s_.y_type, "int8 matmul");  // validates
  const bool fits =
      std::all_of(s_.b.begin(), s_.b.end(), [](int32_t v) { return v >= -128 && v <= 127; });
  if (!fits || s_.m == 0 || s_.k == 0 || s_.n == 0) return;
  // Without VNNI: a u8 source, and the weights in 7-bit halves unless they fit already.
  const bool exact_dot = onednn_int8_dot_exact();
  const bool shift_src = !exact_dot && s_.a_type == DType::Int8;
  const bool halves = !exact_dot && !fits_7bit(s_.b);
  const dt a_t = shift_src ? dt::u8 : integer_kernel_type(s_.a_type, "int8 matmul");
  const dt y_t = halves ? dt::s32 : integer_kernel_type(s_.y_type, "int8 matmul");
  const int32_t a_zp = s_.a_zero_point + (shift_src ? 128 : 0);

  dnnl::primitive_attr attr = part_attr();
  if (!halves && s_.y_type != DType::Int32)
    attr.set_output_scales(s_.scales.size() == 1 ? 0 : 2, s_.scales);
  if (a_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {a_zp});
  if (!halves && is_int8_type(s_.y_type)) {
    if (s_.relu) {
      dnnl::post_ops po;
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(po);
    }
    if (s_.y_zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {s_.y_zero_point});
  }
  const int64_t y_es = static_cast<int64_t>(dnnl::memory::data_type_size(y_t));
  dnnl::memory::desc user_b({s_.k, s_.n}, dt::s8, dnnl::memory::format_tag::ab);
  dnnl::memory::desc b_any({s_.k, s_.n}, dt::s8, dnnl::memory::format_tag::any);
  dnnl::memory::desc bias_md({1, s_.n}, dt::f32, dnnl::memory::format_tag::ab);
  // One weight set, or the two halves whose accumulators run_halves adds (bias and
  // requantization follow their sum).
  const std::vector<std::vector<int8_t>> weight_sets = int8_weight_sets(s_.b, halves);
  const bool with_bias = !s_.bias.empty() && !halves;
  std::vector<DnnlPart> parts;
  std::vector<dnnl::memory> shared_b(weight_sets.size());
  std::string impl;
  const int64_t min_rows = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, s_.k * s_.n));
  for (auto [r0, r1] : split_range(s_.m, threads, min_rows)) {
    dnnl::memory::desc a_md({r1 - r0, s_.k}, a_t, dnnl::memory::format_tag::ab);
    dnnl::memory::desc y_md({r1 - r0, s_.n}, y_t, dnnl::memory::format_tag::ab);
    dnnl::matmul::primitive_desc pd;
    try {
      dnnl::matmul::desc d = with_bias ? dnnl::matmul::desc(a_md, b_any, bias_md, y_md)
                                       : dnnl::matmul::desc(a_md, b_any, y_md);
      pd = dnnl::matmul::primitive_desc(d, attr, dnnl_engine());
    } catch (const dnnl::error&) {
      return;  // no oneDNN kernel for this case: the reference loop runs it
    }
    impl = pd.impl_info_str();
    if (impl.find("ref") != std::string::npos) return;
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, a_md},
                                                          {DNNL_ARG_DST, y_md}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, r0 * s_.k},
                                      {DNNL_ARG_DST, 1, r0 * s_.n * y_es}};
    if (with_bias) {
      descs.push_back({DNNL_ARG_BIAS, bias_md});
      binds.push_back({DNNL_ARG_BIAS, 2, 0});
    }
    // Each weight set writes its own output: y, or the int32 accumulator of its half.
    append_weight_set_parts(pd, descs, binds, halves ? std::vector<int>{3, 4} : std::vector<int>{1},
                            user_b, weight_sets, shared_b, parts);
  }
  if (shift_src) a_u8_.assign(static_cast<std::size_t>(s_.m * s_.k), 0);
  if (halves) {
    acc_lo_.assign(static_cast<std::size_t>(s_.m * s_.n), 0);
    acc_hi_.assign(acc_lo_.size(), 0);
  }
  parts_ = std::move(parts);
  shift_src_ = shift_src;
  halves_ = halves;
  impl_ = halves ? impl + " (7-bit weight halves)" : impl;
}

void Int8MatMul::run(const void* a, void* y, int threads) {
  if (s_.m == 0 || s_.n == 0) return;
  if (parts_.empty()) {
    run_reference(a, y);
    return;
  }
  void* src = const_cast<void*>(a);
  if (shift_src_) {
    shift_s8_to_u8(a, a_u8_.data(), s_.m * s_.k, threads);
    src = a_u8_.data();
  }
  if (halves_) {
    run_parts(parts_, {src, nullptr, nullptr, acc_lo_.data(), acc_hi_.data()}, threads);
    return run_halves(y, threads);
  }
  void* bias = s_.bias.empty() ? nullptr : s_.bias.data();
  run_parts(parts_, {src, y, bias}, threads);
}

void Int8MatMul::run_halves(void* y, int threads) {
  store_halves(halves_epilogue(s_, s_.m, s_.n), acc_lo_.data(), acc_hi_.data(), y, threads);
}

void Int8MatMul::run_reference(const void* ap, void* y) const {
  std::vector<int64_t> acc(static_cast<std::size_t>(s_.n));
  for (int64_t i = 0; i < s_.m; ++i) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t kk = 0; kk < s_.k; ++kk) {
      const int64_t ai = i * s_.k + kk;
      const int32_t a = (s_.a_type == DType::UInt8 ? int32_t{static_cast<const uint8_t*>(ap)[ai]}
                                                   : int32_t{static_cast<const int8_t*>(ap)[ai]}) -
                        s_.a_zero_point;
      if (a == 0) continue;
      const int32_t* row = s_.b.data() + kk * s_.n;
      for (int64_t j = 0; j < s_.n; ++j) acc[j] += int64_t{a} * row[j];
    }
    for (int64_t j = 0; j < s_.n; ++j) {
      const int64_t o = i * s_.n + j;
      const double total = double(acc[j]) + (s_.bias.empty() ? 0.0 : double(s_.bias[j]));
      const float scale = s_.scales.empty() ? 1.f : s_.scales[s_.scales.size() == 1 ? 0 : j];
      store_accumulated(s_.y_type, y, o, total, scale, s_.relu, s_.y_zero_point);
    }
  }
}

}  // namespace fx
