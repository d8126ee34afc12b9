// SPDX-License-Identifier: Apache-2.0
#pragma once
// Templates of the elementwise kernels: a unary map over contiguous data and an
// n-ary broadcasting map over rows (see broadcast.h), both split over threads.

#include <array>

#include "runtime/broadcast.h"
#include "runtime/fast_math.h"
#include "runtime/parallel.h"
#include "runtime/tensor.h"

namespace fx {

template <class In, class Out, class F>
FX_VECTOR_CLONES void map_span(const In* a, Out* o, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

// One broadcast row: each side advances by 1 (sa/sb true) or stays (a scalar).
template <class In, class Out, class F>
FX_VECTOR_CLONES void binary_row(const In* a, const In* b, Out* o, int64_t n, bool sa, bool sb,
                                 F f) {
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (sa) {
    const In vb = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], vb);
  } else if (sb) {
    const In va = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(va, b[i]);
  } else {
    const Out v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  }
}

template <class In, class Out, class F>
void unary_map(const Tensor& x, Tensor& y, F f) {
  const In* a = x.data<In>();
  Out* o = y.data<Out>();
  parallel_for(x.numel(), 4, [&](int64_t b, int64_t e) { map_span(a + b, o + b, e - b, f); });
}

// y = f(a, b) with broadcasting; y already has rows.out_dims.
template <class In, class Out, class F>
void binary_map(const BroadcastRows<2>& rows, const Tensor& x0, const Tensor& x1, Tensor& y, F f) {
  const In* a = x0.data<In>();
  const In* b = x1.data<In>();
  Out* o = y.data<Out>();
  const int64_t inner = rows.inner;
  const int sa = static_cast<int>(rows.inner_stride[0]), sb = static_cast<int>(rows.inner_stride[1]);
  auto row = [&](const In* pa, const In* pb, Out* po, int64_t n) {
    binary_row(pa, pb, po, n, sa != 0, sb != 0, f);
  };
  if (rows.outer == 1) {
    parallel_for(inner, 2, [&](int64_t s, int64_t e) {
      row(a + s * sa, b + s * sb, o + s, e - s);
    });
    return;
  }
  parallel_for(rows.outer, inner * 2, [&](int64_t s, int64_t e) {
    std::array<int64_t, 2> off;
    for (int64_t r = s; r < e; ++r) {
      rows.row_offsets(r, off);
      row(a + off[0], b + off[1], o + r * inner, inner);
    }
  });
}

// y = f(a, b, c) with broadcasting (Where, Clip with tensor bounds).
template <class A, class B, class C, class Out, class F>
void ternary_map(const BroadcastRows<3>& rows, const Tensor& x0, const Tensor& x1,
                 const Tensor& x2, Tensor& y, F f) {
  const A* a = x0.data<A>();
  const B* b = x1.data<B>();
  const C* c = x2.data<C>();
  Out* o = y.data<Out>();
  const int64_t inner = rows.inner;
  const int64_t sa = rows.inner_stride[0], sb = rows.inner_stride[1], sc = rows.inner_stride[2];
  parallel_for(rows.outer, inner * 2, [&](int64_t s, int64_t e) {
    std::array<int64_t, 3> off;
    for (int64_t r = s; r < e; ++r) {
      rows.row_offsets(r, off);
      const A* pa = a + off[0];
      const B* pb = b + off[1];
      const C* pc = c + off[2];
      Out* po = o + r * inner;
      for (int64_t i = 0; i < inner; ++i) po[i] = f(pa[i * sa], pb[i * sb], pc[i * sc]);
    }
  });
}

}  // namespace fx
