// SPDX-License-Identifier: Apache-2.0
#include "transforms/constant_folding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace fx::transforms {
namespace {

using TD = std::shared_ptr<TensorData>;
using Dims = std::vector<int64_t>;

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

Dims strides_of(const Dims& d) {
  Dims s(d.size(), 1);
  for (std::size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

// A result, refused when it would be larger than the fold limit.
TD make(DType dt, Dims dims, std::vector<std::byte> bytes) {
  if (bytes.size() > kFoldLimitBytes) return nullptr;
  return TensorData::owned(dt, std::move(dims), std::move(bytes));
}

// Elements gathered from `in` by flat index: the data-movement ops are all this.
TD gather_elements(const TensorData& in, Dims out_dims, const std::vector<int64_t>& from) {
  const std::size_t es = dtype_size(in.dtype());
  if (es == 0 || from.size() * es > kFoldLimitBytes) return nullptr;
  auto src = in.bytes();
  std::vector<std::byte> out(from.size() * es);
  for (std::size_t i = 0; i < from.size(); ++i)
    std::memcpy(out.data() + i * es, src.data() + std::size_t(from[i]) * es, es);
  return make(in.dtype(), std::move(out_dims), std::move(out));
}

TD with_dims(const TensorData& in, Dims dims) {
  if (count(dims) != in.numel()) return nullptr;
  auto b = in.bytes();
  return make(in.dtype(), std::move(dims), std::vector<std::byte>(b.begin(), b.end()));
}

std::optional<Dims> broadcast(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// For each element of `out`, the flat index of the element of `in` broadcast to it.
std::vector<int64_t> broadcast_index(const Dims& in, const Dims& out) {
  const Dims os = strides_of(out), is = strides_of(in);
  const std::size_t lead = out.size() - in.size();
  std::vector<int64_t> idx(std::size_t(count(out)));
  for (std::size_t f = 0; f < idx.size(); ++f) {
    int64_t rem = int64_t(f), src = 0;
    for (std::size_t d = 0; d < out.size(); ++d) {
      const int64_t c = rem / os[d];
      rem %= os[d];
      if (d >= lead && in[d - lead] != 1) src += c * is[d - lead];
    }
    idx[f] = src;
  }
  return idx;
}

// ---- numbers -------------------------------------------------------------------

bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64;
}
bool is_int(DType t) {
  return t == DType::Int64 || t == DType::Int32 || t == DType::Int8 || t == DType::UInt8 ||
         t == DType::Bool;
}

struct Num {
  DType dt = DType::Undefined;
  Dims dims;
  std::vector<double> f;   // float dtypes
  std::vector<int64_t> i;  // integer dtypes and bool
  bool fl() const { return is_float(dt); }
  std::size_t size() const { return fl() ? f.size() : i.size(); }
};

std::optional<Num> read(const TD& t) {
  if (!t || !(is_float(t->dtype()) || is_int(t->dtype()))) return std::nullopt;
  Num n;
  n.dt = t->dtype();
  n.dims = t->dims();
  if (n.dt == DType::Float64) {
    auto d = t->as<double>();
    n.f.assign(d.begin(), d.end());
  } else if (n.dt == DType::Float32) {
    auto d = t->as<float>();
    n.f.assign(d.begin(), d.end());
  } else {
    n.i = t->to_int64s();
  }
  return n;
}

template <class T>
void put(std::vector<std::byte>& out, std::size_t k, T v) {
  std::memcpy(out.data() + k * sizeof(T), &v, sizeof(T));
}

TD write(const Num& n) {
  const std::size_t es = dtype_size(n.dt), sz = n.size();
  if (es == 0) return nullptr;
  std::vector<std::byte> out(sz * es);
  for (std::size_t k = 0; k < sz; ++k) {
    switch (n.dt) {
      case DType::Float32: put(out, k, float(n.f[k])); break;
      case DType::Float64: put(out, k, n.f[k]); break;
      case DType::Int64: put(out, k, n.i[k]); break;
      case DType::Int32: put(out, k, int32_t(n.i[k])); break;
      case DType::Int8: put(out, k, int8_t(n.i[k])); break;
      case DType::UInt8: put(out, k, uint8_t(n.i[k])); break;
      case DType::Bool: put(out, k, uint8_t(n.i[k] != 0)); break;
      default: return nullptr;
    }
  }
  return make(n.dt, n.dims, std::move(out));
}

Num converted(const Num& a, DType to) {
  Num r;
  r.dt = to;
  r.dims = a.dims;
  if (is_float(to)) {
    if (a.fl())
      r.f = a.f;
    else
      r.f.assign(a.i.begin(), a.i.end());
  } else if (a.fl()) {
    r.i.reserve(a.f.size());
    for (double x : a.f) r.i.push_back(to == DType::Bool ? int64_t(x != 0) : int64_t(x));
  } else {
    r.i = a.i;
    if (to == DType::Bool)
      for (auto& x : r.i) x = x != 0;
  }
  return r;
}

TD binary(const std::string& op, const Num& a, const Num& b) {
  if (a.dt != b.dt) return nullptr;
  auto dims = broadcast(a.dims, b.dims);
  if (!dims || count(*dims) * 8 > int64_t(kFoldLimitBytes)) return nullptr;
  const auto ia = broadcast_index(a.dims, *dims), ib = broadcast_index(b.dims, *dims);
  const bool compare = op == "Equal" || op == "Less" || op == "Greater";
  const bool logic = op == "And" || op == "Or";
  if (logic && a.dt != DType::Bool) return nullptr;
  Num r;
  r.dt = compare ? DType::Bool : a.dt;
  r.dims = *dims;
  const std::size_t n = ia.size();
  if (a.fl()) {
    std::vector<double> out(n);
    for (std::size_t k = 0; k < n; ++k) {
      const double x = a.f[std::size_t(ia[k])], y = b.f[std::size_t(ib[k])];
      if (op == "Add")
        out[k] = x + y;
      else if (op == "Sub")
        out[k] = x - y;
      else if (op == "Mul")
        out[k] = x * y;
      else if (op == "Div")
        out[k] = x / y;
      else if (op == "Min")
        out[k] = std::min(x, y);
      else if (op == "Max")
        out[k] = std::max(x, y);
      else if (op == "FMod")  // Mod with fmod = 1: the sign of the dividend, as C's fmod
        out[k] = std::fmod(x, y);
      else if (op == "Mod")  // fmod = 0: the sign of the divisor
        out[k] = x - y * std::floor(x / y);
      else if (op == "Equal")
        out[k] = x == y;
      else if (op == "Less")
        out[k] = x < y;
      else if (op == "Greater")
        out[k] = x > y;
      else
        return nullptr;
    }
    if (compare)
      r.i.assign(out.begin(), out.end());
    else
      r.f = std::move(out);
  } else {
    r.i.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      const int64_t x = a.i[std::size_t(ia[k])], y = b.i[std::size_t(ib[k])];
      if (op == "Add")
        r.i[k] = x + y;
      else if (op == "Sub")
        r.i[k] = x - y;
      else if (op == "Mul")
        r.i[k] = x * y;
      else if (op == "Div") {
        if (y == 0) return nullptr;  // the runtime's error to report, not ours
        r.i[k] = x / y;
      } else if (op == "Mod" || op == "FMod") {
        if (y == 0) return nullptr;
        r.i[k] = x % y;  // truncated: the sign of the dividend (fmod = 1)
        if (op == "Mod" && r.i[k] != 0 && (r.i[k] < 0) != (y < 0)) r.i[k] += y;
      } else if (op == "Min")
        r.i[k] = std::min(x, y);
      else if (op == "Max")
        r.i[k] = std::max(x, y);
      else if (op == "Equal")
        r.i[k] = x == y;
      else if (op == "Less")
        r.i[k] = x < y;
      else if (op == "Greater")
        r.i[k] = x > y;
      else if (op == "And")
        r.i[k] = x && y;
      else if (op == "Or")
        r.i[k] = x || y;
      else
        return nullptr;
    }
  }
  return write(r);
}

TD unary(const std::string& op, Num a) {
  if (op == "Not") {
    if (a.dt != DType::Bool) return nullptr;
    for (auto& x : a.i) x = !x;
  } else if (op == "Neg") {
    for (auto& x : a.f) x = -x;
    for (auto& x : a.i) x = -x;
  } else if (op == "Abs") {
    for (auto& x : a.f) x = std::abs(x);
    for (auto& x : a.i) x = std::abs(x);
  } else if (op == "Sqrt") {
    if (!a.fl()) return nullptr;
    for (auto& x : a.f) x = std::sqrt(x);
  } else if (op == "Reciprocal" || op == "Floor" || op == "Ceil") {
    if (!a.fl()) return nullptr;
    for (auto& x : a.f)
      x = op == "Reciprocal" ? 1.0 / x : op == "Floor" ? std::floor(x) : std::ceil(x);
  } else {
    return nullptr;
  }
  return write(a);
}

// A ReduceMin/ReduceMax over every axis (no axes given, or all of them): torchvision's
// detection transform takes the min and max of a constant image size this way before
// computing its Resize's output size. Partial reductions are left to the runtime.
TD reduce_all(const Node& n, bool max, const Num& a, const std::vector<TD>& in) {
  if (a.size() == 0) return nullptr;
  Dims axes = n.attrs.get_ints("axes");
  if (in.size() > 1 && in[1]) axes = in[1]->to_int64s();
  if (in.size() > 1 && !in[1] && n.inputs.size() > 1 && n.inputs[1] != kNoValue) return nullptr;
  if (axes.empty() && n.attrs.get_int("noop_with_empty_axes", 0) != 0) return nullptr;
  if (!axes.empty()) {
    std::vector<bool> seen(a.dims.size(), false);
    for (int64_t ax : axes) {
      const int64_t k = ax < 0 ? ax + int64_t(a.dims.size()) : ax;
      if (k < 0 || k >= int64_t(a.dims.size())) return nullptr;
      seen[std::size_t(k)] = true;
    }
    if (std::find(seen.begin(), seen.end(), false) != seen.end()) return nullptr;
  }
  Num r;
  r.dt = a.dt;
  if (n.attrs.get_int("keepdims", 1) != 0) r.dims.assign(a.dims.size(), 1);
  if (a.fl())
    r.f = {max ? *std::max_element(a.f.begin(), a.f.end())
               : *std::min_element(a.f.begin(), a.f.end())};
  else
    r.i = {max ? *std::max_element(a.i.begin(), a.i.end())
               : *std::min_element(a.i.begin(), a.i.end())};
  return write(r);
}

int64_t norm_axis(int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + int64_t(rank) : axis;
}

// Axes from the attribute (older opsets) or the second input (opset 13 on).
std::optional<Dims> axes_of(const Node& n, const std::vector<TD>& in) {
  if (in.size() > 1) {
    if (!in[1])
      return n.inputs.size() > 1 && n.inputs[1] != kNoValue ? std::nullopt
                                                            : std::optional<Dims>(Dims{});
    return in[1]->to_int64s();
  }
  return n.attrs.get_ints("axes");
}

TD reshape(const Node& n, const TensorData& x, const TensorData& shape) {
  Dims want = shape.to_int64s();
  const bool allowzero = n.attrs.get_int("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0 && !allowzero) {
      if (i >= x.dims().size()) return nullptr;
      want[i] = x.dims()[i];
    }
    if (want[i] == -1) {
      if (infer >= 0) return nullptr;
      infer = int64_t(i);
    } else {
      known *= want[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known) return nullptr;
    want[std::size_t(infer)] = x.numel() / known;
  }
  return with_dims(x, want);
}

TD concat(const Node& n, const std::vector<TD>& in) {
  if (in.empty()) return nullptr;
  const DType dt = in[0]->dtype();
  const std::size_t rank = in[0]->dims().size(), es = dtype_size(dt);
  const int64_t axis = norm_axis(n.attrs.get_int("axis", 0), rank);
  if (es == 0 || axis < 0 || axis >= int64_t(rank)) return nullptr;
  Dims out = in[0]->dims();
  out[std::size_t(axis)] = 0;
  for (const auto& t : in) {
    if (!t || t->dtype() != dt || t->dims().size() != rank) return nullptr;
    for (std::size_t d = 0; d < rank; ++d)
      if (int64_t(d) != axis && t->dims()[d] != out[d]) return nullptr;
    out[std::size_t(axis)] += t->dims()[std::size_t(axis)];
  }
  const int64_t outer = count(Dims(out.begin(), out.begin() + axis));
  const int64_t inner = count(Dims(out.begin() + axis + 1, out.end()));
  if (std::size_t(count(out)) * es > kFoldLimitBytes) return nullptr;
  std::vector<std::byte> bytes;
  bytes.reserve(std::size_t(count(out)) * es);
  for (int64_t o = 0; o < outer; ++o)
    for (const auto& t : in) {
      const std::size_t block = std::size_t(t->dims()[std::size_t(axis)] * inner) * es;
      auto src = t->bytes();
      bytes.insert(bytes.end(), src.begin() + std::ptrdiff_t(std::size_t(o) * block),
                   src.begin() + std::ptrdiff_t(std::size_t(o + 1) * block));
    }
  return make(dt, out, std::move(bytes));
}

TD gather(const Node& n, const TensorData& x, const TensorData& indices) {
  const Dims& xd = x.dims();
  const int64_t axis = norm_axis(n.attrs.get_int("axis", 0), xd.size());
  if (axis < 0 || axis >= int64_t(xd.size())) return nullptr;
  Dims idx = indices.to_int64s();
  const int64_t len = xd[std::size_t(axis)];
  for (auto& i : idx) {
    if (i < 0) i += len;
    if (i < 0 || i >= len) return nullptr;
  }
  Dims out(xd.begin(), xd.begin() + axis);
  out.insert(out.end(), indices.dims().begin(), indices.dims().end());
  out.insert(out.end(), xd.begin() + axis + 1, xd.end());
  const int64_t outer = count(Dims(xd.begin(), xd.begin() + axis));
  const int64_t inner = count(Dims(xd.begin() + axis + 1, xd.end()));
  std::vector<int64_t> from;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx)
      for (int64_t k = 0; k < inner; ++k) from.push_back((o * len + i) * inner + k);
  return gather_elements(x, out, from);
}

TD slice(const Node& n, const std::vector<TD>& in) {
  const TensorData& x = *in[0];
  const Dims& xd = x.dims();
  Dims starts, ends, axes, steps;
  if (in.size() >= 3) {
    if (!in[1] || !in[2]) return nullptr;
    starts = in[1]->to_int64s();
    ends = in[2]->to_int64s();
    if (in.size() > 3 && in[3]) axes = in[3]->to_int64s();
    if (in.size() > 4 && in[4]) steps = in[4]->to_int64s();
  } else {
    starts = n.attrs.get_ints("starts");
    ends = n.attrs.get_ints("ends");
    axes = n.attrs.get_ints("axes");
  }
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return nullptr;
  Dims begin(xd.size(), 0), step(xd.size(), 1), out = xd;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = norm_axis(axes[k], xd.size());
    if (a < 0 || a >= int64_t(xd.size()) || steps[k] == 0) return nullptr;
    const int64_t dim = xd[std::size_t(a)], st = steps[k];
    auto clampi = [&](int64_t v, bool is_start) {
      if (v < 0) v += dim;
      if (st > 0) return std::clamp<int64_t>(v, 0, dim);
      return is_start ? std::clamp<int64_t>(v, 0, dim - 1) : std::clamp<int64_t>(v, -1, dim - 1);
    };
    const int64_t s = clampi(starts[k], true), e = clampi(ends[k], false);
    const int64_t len = st > 0 ? std::max<int64_t>(0, (e - s + st - 1) / st)
                               : std::max<int64_t>(0, (s - e + (-st) - 1) / (-st));
    begin[std::size_t(a)] = s;
    step[std::size_t(a)] = st;
    out[std::size_t(a)] = len;
  }
  const Dims xs = strides_of(xd), os = strides_of(out);
  std::vector<int64_t> from(std::size_t(count(out)));
  for (std::size_t f = 0; f < from.size(); ++f) {
    int64_t rem = int64_t(f), src = 0;
    for (std::size_t d = 0; d < out.size(); ++d) {
      const int64_t c = rem / os[d];
      rem %= os[d];
      src += (begin[d] + c * step[d]) * xs[d];
    }
    from[f] = src;
  }
  return gather_elements(x, out, from);
}

TD transpose(const Node& n, const TensorData& x) {
  const Dims& xd = x.dims();
  Dims perm = n.attrs.get_ints("perm");
  if (perm.empty())
    for (std::size_t i = xd.size(); i-- > 0;) perm.push_back(int64_t(i));
  if (perm.size() != xd.size()) return nullptr;
  Dims out(xd.size());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= int64_t(xd.size())) return nullptr;
    out[i] = xd[std::size_t(perm[i])];
  }
  const Dims xs = strides_of(xd), os = strides_of(out);
  std::vector<int64_t> from(std::size_t(count(out)));
  for (std::size_t f = 0; f < from.size(); ++f) {
    int64_t rem = int64_t(f), src = 0;
    for (std::size_t d = 0; d < out.size(); ++d) {
      src += (rem / os[d]) * xs[std::size_t(perm[d])];
      rem %= os[d];
    }
    from[f] = src;
  }
  return gather_elements(x, out, from);
}

TD shape_of(const Node& n, const Dims& dims) {
  const int64_t r = int64_t(dims.size());
  int64_t s = n.attrs.get_int("start", 0), e = n.attrs.get_int("end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = std::clamp<int64_t>(s, 0, r);
  e = std::clamp<int64_t>(e, s, r);
  Dims v(dims.begin() + s, dims.begin() + e);
  return TensorData::from_int64s({int64_t(v.size())}, v);
}

}  // namespace

std::shared_ptr<TensorData> constant_node_data(const Node& n) {
  if (auto t = n.attrs.get_tensor("value")) return t;
  if (const auto* v = n.attrs.find("value_float"))
    if (auto* f = std::get_if<float>(v)) return TensorData::from_floats({}, {*f});
  if (const auto* v = n.attrs.find("value_floats"))
    if (auto* f = std::get_if<std::vector<float>>(v))
      return TensorData::from_floats({int64_t(f->size())}, *f);
  if (const auto* v = n.attrs.find("value_int"))
    if (auto* i = std::get_if<int64_t>(v)) return TensorData::from_int64s({}, {*i});
  if (const auto* v = n.attrs.find("value_ints"))
    if (auto* i = std::get_if<std::vector<int64_t>>(v))
      return TensorData::from_int64s({int64_t(i->size())}, *i);
  return nullptr;
}

std::shared_ptr<TensorData> fold_node(const Node& n, const std::vector<TD>& in) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return nullptr;
  if (n.outputs.size() != 1) return nullptr;
  const std::string& op = n.op_type;
  if (op == "Constant") return constant_node_data(n);
  if (in.empty() || !in[0]) return nullptr;
  const TensorData& x = *in[0];
  if (op == "Identity") return with_dims(x, x.dims());
  if (op == "Shape") return shape_of(n, x.dims());
  if (op == "Size") return TensorData::from_int64s({}, {x.numel()});
  if (op == "Reshape") return in.size() > 1 && in[1] ? reshape(n, x, *in[1]) : nullptr;
  if (op == "Flatten") {
    const int64_t axis = norm_axis(n.attrs.get_int("axis", 1), x.dims().size());
    if (axis < 0 || axis > int64_t(x.dims().size())) return nullptr;
    Dims d = x.dims();
    return with_dims(
        x, {count(Dims(d.begin(), d.begin() + axis)), count(Dims(d.begin() + axis, d.end()))});
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    auto axes = axes_of(n, in);
    if (!axes) return nullptr;
    Dims d = x.dims();
    if (op == "Squeeze") {
      Dims out;
      for (std::size_t i = 0; i < d.size(); ++i) {
        bool listed = axes->empty() ? d[i] == 1 : false;
        for (int64_t a : *axes) listed = listed || norm_axis(a, d.size()) == int64_t(i);
        if (!listed) out.push_back(d[i]);
      }
      return with_dims(x, out);
    }
    const std::size_t rank = d.size() + axes->size();
    Dims sorted;
    for (int64_t a : *axes) sorted.push_back(norm_axis(a, rank));
    std::sort(sorted.begin(), sorted.end());
    for (int64_t a : sorted) {
      if (a < 0 || a > int64_t(d.size())) return nullptr;
      d.insert(d.begin() + a, 1);
    }
    return with_dims(x, d);
  }
  if (op == "Concat") {
    for (const auto& t : in)
      if (!t) return nullptr;
    return concat(n, in);
  }
  if (op == "Gather") return in.size() > 1 && in[1] ? gather(n, x, *in[1]) : nullptr;
  if (op == "Slice") return slice(n, in);
  if (op == "Transpose") return transpose(n, x);
  if (op == "Expand") {
    if (in.size() < 2 || !in[1]) return nullptr;
    auto dims = broadcast(x.dims(), in[1]->to_int64s());
    if (!dims) return nullptr;
    return gather_elements(x, *dims, broadcast_index(x.dims(), *dims));
  }
  if (op == "ConstantOfShape") {
    const Dims dims = x.to_int64s();
    TD value = n.attrs.get_tensor("value");
    if (!value) value = TensorData::from_floats({1}, {0.f});
    if (value->numel() != 1) return nullptr;
    return gather_elements(*value, dims, std::vector<int64_t>(std::size_t(count(dims)), 0));
  }
  auto a = read(in[0]);
  if (!a) return nullptr;
  if (op == "Cast") {
    const auto to = DType(n.attrs.get_int("to", 0));
    if (!is_float(to) && !is_int(to)) return nullptr;
    return write(converted(*a, to));
  }
  if (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Not" || op == "Reciprocal" ||
      op == "Floor" || op == "Ceil")
    return unary(op, *a);
  if (op == "ReduceMin" || op == "ReduceMax") return reduce_all(n, op == "ReduceMax", *a, in);
  if (op == "Range") {
    if (in.size() < 3 || !in[1] || !in[2]) return nullptr;
    auto l = read(in[1]), d = read(in[2]);
    if (!l || !d || a->size() != 1 || l->size() != 1 || d->size() != 1) return nullptr;
    Num r;
    r.dt = a->dt;
    if (a->fl()) {
      const double s = a->f[0], step = d->f[0];
      if (step == 0) return nullptr;
      const int64_t len = std::max<int64_t>(0, int64_t(std::ceil((l->f[0] - s) / step)));
      if (len * 8 > int64_t(kFoldLimitBytes)) return nullptr;
      for (int64_t k = 0; k < len; ++k) r.f.push_back(s + double(k) * step);
      r.dims = {len};
    } else {
      const int64_t s = a->i[0], step = d->i[0];
      if (step == 0) return nullptr;
      const int64_t len =
          std::max<int64_t>(0, int64_t(std::ceil(double(l->i[0] - s) / double(step))));
      if (len * 8 > int64_t(kFoldLimitBytes)) return nullptr;
      for (int64_t k = 0; k < len; ++k) r.i.push_back(s + k * step);
      r.dims = {len};
    }
    return write(r);
  }
  if (op == "Where") {
    if (in.size() < 3 || !in[1] || !in[2]) return nullptr;
    auto x1 = read(in[1]), y1 = read(in[2]);
    if (!x1 || !y1 || x1->dt != y1->dt) return nullptr;
    auto d1 = broadcast(a->dims, x1->dims);
    auto dims = d1 ? broadcast(*d1, y1->dims) : std::nullopt;
    if (!dims || count(*dims) * 8 > int64_t(kFoldLimitBytes)) return nullptr;
    const auto ic = broadcast_index(a->dims, *dims), ix = broadcast_index(x1->dims, *dims),
               iy = broadcast_index(y1->dims, *dims);
    Num r;
    r.dt = x1->dt;
    r.dims = *dims;
    for (std::size_t k = 0; k < ic.size(); ++k) {
      const bool c = a->fl() ? a->f[std::size_t(ic[k])] != 0 : a->i[std::size_t(ic[k])] != 0;
      if (r.fl())
        r.f.push_back(c ? x1->f[std::size_t(ix[k])] : y1->f[std::size_t(iy[k])]);
      else
        r.i.push_back(c ? x1->i[std::size_t(ix[k])] : y1->i[std::size_t(iy[k])]);
    }
    return write(r);
  }
  static const char* kBinary[] = {"Add",   "Sub",  "Mul",     "Div", "Min", "Max",
                                  "Equal", "Less", "Greater", "And", "Or",  "Mod"};
  if (std::find(std::begin(kBinary), std::end(kBinary), op) != std::end(kBinary)) {
    if (in.size() != 2 || !in[1]) return nullptr;
    auto b = read(in[1]);
    // Mod's remainder takes the divisor's sign unless fmod = 1 (swin's window padding:
    // (window - W % window) % window on the input's shape).
    const std::string how = op == "Mod" && n.attrs.get_int("fmod", 0) != 0 ? "FMod" : op;
    return b ? binary(how, *a, *b) : nullptr;
  }
  return nullptr;
}

}  // namespace fx::transforms
