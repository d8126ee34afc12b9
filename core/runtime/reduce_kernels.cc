// SPDX-License-Identifier: Apache-2.0
// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp and
// ArgMax/ArgMin. Axes come from the attribute (older opsets) or input 1 (newer).
// The input is viewed as [outer, reduced, inner] when the reduced axes are
// adjacent (the usual case: last axis, or H and W); otherwise reduced axes are
// first gathered to the end by a strided copy.

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/lane_reduce.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

// The op is a template parameter so that the inner loops have no branch on it.
template <class T, Red op>
struct Acc {
  T init() const {
    switch (op) {
      case Red::Max:
        return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                    : std::numeric_limits<T>::lowest();
      case Red::Min:
        return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                    : std::numeric_limits<T>::max();
      case Red::Prod: return T(1);
      default: return T(0);
    }
  }
  T add(T a, T v) const {
    switch (op) {
      case Red::Max: return v > a || v != v ? v : a;
      case Red::Min: return v < a || v != v ? v : a;
      case Red::Prod: return a * v;
      case Red::L1: return a + (v < 0 ? -v : v);
      case Red::L2:
      case Red::SumSquare: return a + v * v;
      case Red::LogSumExp: return a + static_cast<T>(std::exp(static_cast<double>(v)));
      default: return a + v;
    }
  }
  T finish(T a, int64_t n) const {
    switch (op) {
      case Red::Mean: return n ? static_cast<T>(a / static_cast<T>(n)) : a;
      case Red::L2: return static_cast<T>(std::sqrt(static_cast<double>(a)));
      case Red::LogSum:
      case Red::LogSumExp: return static_cast<T>(std::log(static_cast<double>(a)));
      default: return a;
    }
  }
};

// Moves the reduced axes to the end; returns the [outer, R] view's tensor.
Tensor gather_reduced_last(const Tensor& x, const std::vector<bool>& red, int64_t& outer,
                           int64_t& r) {
  std::vector<int64_t> perm;
  for (std::size_t i = 0; i < red.size(); ++i)
    if (!red[i]) perm.push_back(static_cast<int64_t>(i));
  for (std::size_t i = 0; i < red.size(); ++i)
    if (red[i]) perm.push_back(static_cast<int64_t>(i));
  auto xs = contiguous_strides(x.dims());
  std::vector<int64_t> dims, strides;
  outer = 1;
  r = 1;
  for (int64_t p : perm) {
    dims.push_back(x.dims()[p]);
    strides.push_back(xs[p]);
    (red[p] ? r : outer) *= x.dims()[p];
  }
  Tensor t(x.dtype(), dims);
  const std::size_t es = dtype_size(x.dtype());
  auto* out = static_cast<std::byte*>(t.raw());
  const auto* in = static_cast<const std::byte*>(x.raw());
  auto os = contiguous_strides(dims);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t off = 0, rem = i;
    for (std::size_t d = dims.size(); d-- > 0;) {
      off += (rem % dims[d]) * strides[d];
      rem /= dims[d];
    }
    std::memcpy(out + i * static_cast<int64_t>(es), in + off * static_cast<int64_t>(es), es);
  }
  return t;
}

void reduce_kernel(KernelContext& ctx, const Node& n, Red op) {
  const Tensor& x = ctx.in(0);
  const int64_t rank = static_cast<int64_t>(x.rank());
  bool keep = n.attrs.get_int("keepdims", 1) != 0;
  bool noop_empty = n.attrs.get_int("noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes =
      n.attrs.has("axes") ? n.attrs.get_ints("axes") : ints_of(ctx.input(1));
  std::vector<bool> red(x.rank(), axes.empty() && !noop_empty);
  for (int64_t a : axes) red[normalize_axis(a, rank)] = true;
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!red[d])
      out.push_back(x.dims()[d]);
    else if (keep)
      out.push_back(1);
  }
  Tensor& y = ctx.output(0, x.dtype(), out);
  // Find [outer, R, inner]: reduced dims (ignoring size-1 dims) must be adjacent.
  int first = -1, last = -1;
  bool adjacent = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (x.dims()[d] == 1) continue;
    if (red[d]) {
      if (first < 0)
        first = static_cast<int>(d);
      else if (last != static_cast<int>(d) - 1) {
        for (int k = last + 1; k < d; ++k)
          if (x.dims()[k] != 1) adjacent = false;
      }
      last = static_cast<int>(d);
    }
  }
  int64_t outer = 1, r = 1, inner = 1;
  Tensor src = x;
  if (first < 0) {
    outer = x.numel();
  } else if (adjacent) {
    for (int64_t d = 0; d < first; ++d) outer *= x.dims()[d];
    for (int64_t d = first; d <= last; ++d) r *= x.dims()[d];
    for (int64_t d = last + 1; d < rank; ++d) inner *= x.dims()[d];
  } else {
    src = gather_reduced_last(x, red, outer, r);
  }
  if (x.numel() == 0) r = 0;
  auto body = [&](auto tag, auto op_c) {
    using T = decltype(tag);
    Acc<T, decltype(op_c)::value> acc;
    const T* in = src.data<T>();
    T* o = y.data<T>();
    parallel_for(outer, r * inner, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T* orow = o + i * inner;
        for (int64_t j = 0; j < inner; ++j) orow[j] = acc.init();
        const T* base = in + i * r * inner;
        if (inner == 1) {
          constexpr Red kOp = decltype(op_c)::value;
          if constexpr (std::is_same_v<T, float> && (kOp == Red::Sum || kOp == Red::Mean)) {
            orow[0] = lane_sum(base, r);  // a serial float chain does not vectorize
          } else if constexpr (std::is_same_v<T, float> && kOp == Red::Max) {
            orow[0] = lane_max(base, r, acc.init());
          } else {
            T a = acc.init();
            for (int64_t k = 0; k < r; ++k) a = acc.add(a, base[k]);
            orow[0] = a;
          }
        } else {
          for (int64_t k = 0; k < r; ++k) {
            const T* row = base + k * inner;
            for (int64_t j = 0; j < inner; ++j) orow[j] = acc.add(orow[j], row[j]);
          }
        }
        for (int64_t j = 0; j < inner; ++j) orow[j] = acc.finish(orow[j], r);
      }
    });
  };
  dispatch_numeric(x.dtype(), n.op_type.c_str(), [&](auto tag) {
    switch (op) {
#define FX_RED(X)                                     \
  case Red::X:                                        \
    body(tag, std::integral_constant<Red, Red::X>{}); \
    break;
      FX_RED(Sum)
      FX_RED(Mean) FX_RED(Max) FX_RED(Min) FX_RED(Prod) FX_RED(L1) FX_RED(L2) FX_RED(SumSquare)
          FX_RED(LogSum) FX_RED(LogSumExp)
#undef FX_RED
    }
  });
}

void arg_kernel(KernelContext& ctx, const Node& n, bool is_max) {
  const Tensor& x = ctx.in(0);
  const int64_t rank = static_cast<int64_t>(x.rank());
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 0), rank);
  bool keep = n.attrs.get_int("keepdims", 1) != 0;
  bool last_index = n.attrs.get_int("select_last_index", 0) != 0;
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis)
      out.push_back(x.dims()[d]);
    else if (keep)
      out.push_back(1);
  }
  Tensor& y = ctx.output(0, DType::Int64, out);
  int64_t outer = 1, r = x.dims()[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dims()[d];
  dispatch_numeric(x.dtype(), n.op_type.c_str(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    int64_t* o = y.data<int64_t>();
    for (int64_t i = 0; i < outer; ++i) {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t best = 0;
        T bv = in[i * r * inner + j];
        for (int64_t k = 1; k < r; ++k) {
          T v = in[(i * r + k) * inner + j];
          bool better =
              is_max ? (v > bv || (last_index && v == bv)) : (v < bv || (last_index && v == bv));
          if (better) {
            bv = v;
            best = k;
          }
        }
        o[i * inner + j] = best;
      }
    }
  });
}

}  // namespace

void register_reduce_kernels(KernelTable& t) {
  const std::pair<const char*, Red> ops[] = {
      {"ReduceSum", Red::Sum},       {"ReduceMean", Red::Mean},
      {"ReduceMax", Red::Max},       {"ReduceMin", Red::Min},
      {"ReduceProd", Red::Prod},     {"ReduceL1", Red::L1},
      {"ReduceL2", Red::L2},         {"ReduceSumSquare", Red::SumSquare},
      {"ReduceLogSum", Red::LogSum}, {"ReduceLogSumExp", Red::LogSumExp}};
  for (auto [name, op] : ops) {
    Red o = op;
    t[name] = [o](const Graph&, const Node& n) {
      return fn_kernel([n, o](KernelContext& ctx) { reduce_kernel(ctx, n, o); });
    };
  }
  t["ArgMax"] = [](const Graph&, const Node& n) {
    return fn_kernel([n](KernelContext& ctx) { arg_kernel(ctx, n, true); });
  };
  t["ArgMin"] = [](const Graph&, const Node& n) {
    return fn_kernel([n](KernelContext& ctx) { arg_kernel(ctx, n, false); });
  };
}

}  // namespace fx
