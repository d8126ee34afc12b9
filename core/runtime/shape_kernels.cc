// SPDX-License-Identifier: Apache-2.0
// Kernels that only move or describe data: Reshape, Flatten, Squeeze, Unsqueeze,
// Identity and Dropout are views of their input (no copy); Shape, Size, Constant,
// ConstantOfShape, Range, Cast, Expand.

#include <cmath>
#include <cstring>

#include "runtime/elementwise_ops.h"
#include "runtime/half.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

std::vector<int64_t> reshape_dims(const Tensor& x, const std::vector<int64_t>& spec,
                                  bool allowzero) {
  std::vector<int64_t> out(spec.size());
  int64_t known = 1, infer = -1;
  for (std::size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      if (i >= x.rank()) throw Error("Reshape: 0 refers to a missing input dim");
      d = x.dims()[i];
    }
    if (d == -1) {
      if (infer >= 0) throw Error("Reshape: more than one -1 in " + dims_str(spec));
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) throw Error("Reshape: bad dim in " + dims_str(spec));
    out[i] = d;
    known *= d;
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known) {
      throw Error("Reshape: cannot reshape " + x.str() + " to " + dims_str(spec));
    }
    out[static_cast<std::size_t>(infer)] = x.numel() / known;
  }
  if (dims_numel(out) != x.numel()) {
    throw Error("Reshape: cannot reshape " + x.str() + " to " + dims_str(spec));
  }
  return out;
}

// Axes from the "axes" attribute (older opsets) or input 1 (newer).
std::vector<int64_t> axes_of(const Node& n, KernelContext& ctx, std::size_t input) {
  if (n.attrs.has("axes")) return n.attrs.get_ints("axes");
  return ints_of(ctx.input(static_cast<int>(input)));
}

void copy_tensor(const Tensor& x, Tensor& y) {
  if (x.raw() != y.raw() && x.byte_size()) std::memcpy(y.raw(), x.raw(), x.byte_size());
}

template <class T, class U>
void cast_loop(const Tensor& x, Tensor& y) {
  unary_map<T, U>(x, y, [](T v) {
    if constexpr (std::is_same_v<U, uint8_t> && std::is_floating_point_v<T>) {
      return static_cast<U>(v);
    }
    return static_cast<U>(v);
  });
}

void cast_kernel(KernelContext& ctx, DType to) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.output(0, to, x.dims());
  if (x.dtype() == to) return copy_tensor(x, y);
  dispatch_all(x.dtype(), "Cast", [&](auto a) {
    using T = decltype(a);
    dispatch_all(to, "Cast", [&](auto b) {
      using U = decltype(b);
      if (to == DType::Bool) {
        unary_map<T, uint8_t>(x, y, [](T v) { return static_cast<uint8_t>(v != T(0)); });
      } else {
        cast_loop<T, U>(x, y);
      }
    });
  });
}

}  // namespace

void register_shape_kernels(KernelTable& t) {
  t["Reshape"] = [](const Graph&, const Node& n) {
    bool allowzero = n.attrs.get_int("allowzero", 0) != 0;
    auto shape_attr = n.attrs.get_ints("shape");  // opset < 5
    return fn_kernel([=](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      auto spec = ctx.input(1) ? ints_of(ctx.input(1)) : shape_attr;
      ctx.alias_output(0, x, reshape_dims(x, spec, allowzero));
    }, true);
  };
  t["Flatten"] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", 1);
    return fn_kernel([=](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      int64_t r = static_cast<int64_t>(x.rank());
      int64_t a = axis < 0 ? axis + r : axis;
      if (a < 0 || a > r) throw Error("Flatten: axis out of range");
      int64_t outer = 1;
      for (int64_t i = 0; i < a; ++i) outer *= x.dims()[i];
      ctx.alias_output(0, x, {outer, outer ? x.numel() / outer : 0});
    }, true);
  };
  t["Squeeze"] = [](const Graph&, const Node& n) {
    return fn_kernel([n](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      auto axes = axes_of(n, ctx, 1);
      int64_t r = static_cast<int64_t>(x.rank());
      std::vector<bool> drop(x.rank(), false);
      if (axes.empty()) {
        for (std::size_t i = 0; i < x.rank(); ++i) drop[i] = x.dims()[i] == 1;
      }
      for (int64_t a : axes) {
        a = normalize_axis(a, r);
        if (x.dims()[a] != 1) throw Error("Squeeze: dim " + std::to_string(a) + " of " + x.str() + " is not 1");
        drop[a] = true;
      }
      std::vector<int64_t> out;
      for (std::size_t i = 0; i < x.rank(); ++i) if (!drop[i]) out.push_back(x.dims()[i]);
      ctx.alias_output(0, x, out);
    }, true);
  };
  t["Unsqueeze"] = [](const Graph&, const Node& n) {
    return fn_kernel([n](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      auto axes = axes_of(n, ctx, 1);
      int64_t r = static_cast<int64_t>(x.rank() + axes.size());
      std::vector<bool> add(static_cast<std::size_t>(r), false);
      for (int64_t a : axes) {
        a = normalize_axis(a, r);
        if (add[a]) throw Error("Unsqueeze: repeated axis");
        add[a] = true;
      }
      std::vector<int64_t> out;
      std::size_t k = 0;
      for (int64_t i = 0; i < r; ++i) out.push_back(add[i] ? 1 : x.dims()[k++]);
      ctx.alias_output(0, x, out);
    }, true);
  };
  auto identity = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      // Dropout's training_mode input: training drops at random, not supported.
      if (const Tensor* tm = ctx.input(2); tm && tm->numel() && tm->to_int64s()[0] != 0) {
        const Tensor* ratio = ctx.input(1);
        float r = ratio && ratio->numel() ? ratio->to_floats()[0] : 0.5f;
        if (r != 0.0f) throw Error("Dropout in training mode (ratio > 0) is not supported");
      }
      ctx.alias_output(0, x, x.dims());
      // Dropout's optional mask: all kept at inference. It cannot alias, so it is
      // filled in a private buffer.
      if (ctx.num_outputs() > 1) {
        Tensor& m = ctx.output(1, DType::Bool, x.dims());
        std::memset(m.raw(), 1, m.byte_size());
      }
    }, true);
  };
  t["Identity"] = identity;
  t["Dropout"] = identity;
  t["Shape"] = [](const Graph&, const Node& n) {
    int64_t start = n.attrs.get_int("start", 0);
    bool has_end = n.attrs.has("end");
    int64_t end = n.attrs.get_int("end", 0);
    return fn_kernel([=](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      int64_t r = static_cast<int64_t>(x.rank());
      auto clampi = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
      int64_t s = clampi(start), e = has_end ? clampi(end) : r;
      int64_t len = std::max<int64_t>(0, e - s);
      Tensor& y = ctx.output(0, DType::Int64, {len});
      for (int64_t i = 0; i < len; ++i) y.data<int64_t>()[i] = x.dims()[s + i];
    });
  };
  t["Size"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) {
      Tensor& y = ctx.output(0, DType::Int64, {});
      y.data<int64_t>()[0] = ctx.in(0).numel();
    });
  };
  t["Constant"] = [](const Graph&, const Node& n) {
    Tensor value;
    if (auto d = n.attrs.get_tensor("value")) {
      value = Tensor::from_data(d).clone();
    } else if (n.attrs.has("value_float")) {
      value = Tensor::from_floats({}, {n.attrs.get_float("value_float", 0)});
    } else if (n.attrs.has("value_floats")) {
      auto v = n.attrs.get_floats("value_floats");
      value = Tensor::from_floats({static_cast<int64_t>(v.size())}, v);
    } else if (n.attrs.has("value_int")) {
      value = Tensor::from_int64s({}, {n.attrs.get_int("value_int", 0)});
    } else if (n.attrs.has("value_ints")) {
      auto v = n.attrs.get_ints("value_ints");
      value = Tensor::from_int64s({static_cast<int64_t>(v.size())}, v);
    } else {
      throw Error("Constant: no supported value attribute (sparse and string values are not)");
    }
    // The value lives in the kernel; the output is a view of it.
    return fn_kernel([value](KernelContext& ctx) { ctx.alias_output(0, value, value.dims()); },
                     true);
  };
  t["ConstantOfShape"] = [](const Graph&, const Node& n) {
    Tensor fill = Tensor::from_floats({1}, {0.0f});
    if (auto d = n.attrs.get_tensor("value")) fill = Tensor::from_data(d).clone();
    return fn_kernel([fill](KernelContext& ctx) {
      auto dims = ints_of(ctx.input(0));
      Tensor& y = ctx.output(0, fill.dtype(), dims);
      std::size_t es = dtype_size(fill.dtype());
      auto* o = static_cast<std::byte*>(y.raw());
      for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(o + i * es, fill.raw(), es);
    });
  };
  t["Cast"] = [](const Graph&, const Node& n) {
    DType to = static_cast<DType>(n.attrs.get_int("to", 0));
    if (dtype_size(to) == 0) throw Error("Cast: unsupported target type " + std::string(dtype_name(to)));
    // A half target is computed as float32 and narrowed by the half adapter.
    const DType eff = dtype_is_half(to) ? DType::Float32 : to;
    return fn_kernel([eff](KernelContext& ctx) { cast_kernel(ctx, eff); });
  };
  t["CastLike"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) { cast_kernel(ctx, ctx.in(1).dtype()); });
  };
  t["Range"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) {
      const Tensor& s = ctx.in(0);
      dispatch_numeric(s.dtype(), "Range", [&](auto tag) {
        using T = decltype(tag);
        T start = s.data<T>()[0], limit = ctx.in(1).data<T>()[0], delta = ctx.in(2).data<T>()[0];
        if (delta == 0) throw Error("Range: delta is 0");
        double cnt = std::ceil(static_cast<double>(limit - start) / static_cast<double>(delta));
        int64_t n = std::max<int64_t>(0, static_cast<int64_t>(cnt));
        Tensor& y = ctx.output(0, s.dtype(), {n});
        for (int64_t i = 0; i < n; ++i) y.data<T>()[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      });
    });
  };
  t["Expand"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      auto shape = ints_of(ctx.input(1));
      auto out_dims = broadcast_dims({&x.dims(), &shape});
      Tensor& y = ctx.output(0, x.dtype(), out_dims);
      // Broadcast x against y itself as the second operand, whose values are ignored.
      BroadcastRows<2> rows({&x.dims(), &out_dims});
      dispatch_all(x.dtype(), "Expand", [&](auto tag) {
        using T = decltype(tag);
        binary_map<T, T>(rows, x, y, y, [](T a, T) { return a; });
      });
    });
  };
}

}  // namespace fx
