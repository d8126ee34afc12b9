// SPDX-License-Identifier: Apache-2.0
#include "onnx/range_shape.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

namespace fx {
namespace {

// A scalar known before running: a number or a symbolic dim.
using Scalar = std::variant<double, std::string>;

std::optional<double> scalar_of_tensor(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n != 1) return std::nullopt;
  using TP = onnx::TensorProto;
  if (t.has_raw_data()) {
    const std::string& r = t.raw_data();
    auto read = [&](auto tag) -> std::optional<double> {
      using T = decltype(tag);
      if (r.size() != sizeof(T)) return std::nullopt;
      T v;
      std::memcpy(&v, r.data(), sizeof v);
      return static_cast<double>(v);
    };
    switch (t.data_type()) {
      case TP::INT64: return read(int64_t{});
      case TP::INT32: return read(int32_t{});
      case TP::FLOAT: return read(float{});
      case TP::DOUBLE: return read(double{});
      default: return std::nullopt;
    }
  }
  if (t.int64_data_size() == 1) return static_cast<double>(t.int64_data(0));
  if (t.int32_data_size() == 1) return static_cast<double>(t.int32_data(0));
  if (t.float_data_size() == 1) return static_cast<double>(t.float_data(0));
  if (t.double_data_size() == 1) return t.double_data(0);
  return std::nullopt;
}

}  // namespace

int set_range_lengths(onnx::GraphProto& g, const ShapeData& data) {
  std::unordered_map<std::string, const onnx::TensorProto*> constants;
  for (const auto& t : g.initializer()) constants[t.name()] = &t;
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) constants[n.output(0)] = &a.t();
  auto scalar = [&](const std::string& name) -> std::optional<Scalar> {
    if (auto c = constants.find(name); c != constants.end()) {
      if (auto v = scalar_of_tensor(*c->second)) return Scalar{*v};
      return std::nullopt;
    }
    auto d = data.find(name);
    if (d == data.end() || d->second.dim_size() != 1) return std::nullopt;
    const auto& dim = d->second.dim(0);
    if (dim.has_dim_value()) return Scalar{static_cast<double>(dim.dim_value())};
    if (dim.has_dim_param()) return Scalar{dim.dim_param()};
    return std::nullopt;
  };
  // The lengths found replace all of value_info: the next inference pass then carries
  // them on instead of keeping the unknown dims ("unk__N") it had invented downstream.
  std::vector<std::pair<std::string, onnx::TensorShapeProto_Dimension>> lengths;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Range" || n.input_size() != 3 || n.output_size() != 1) continue;
    auto start = scalar(n.input(0)), limit = scalar(n.input(1)), delta = scalar(n.input(2));
    if (!start || !limit || !delta) continue;
    onnx::TensorShapeProto_Dimension len;
    const double* s = std::get_if<double>(&*start);
    const double* dl = std::get_if<double>(&*delta);
    if (!s || !dl || *dl == 0) continue;
    if (const double* l = std::get_if<double>(&*limit)) {
      len.set_dim_value(static_cast<int64_t>(std::max(0.0, std::ceil((*l - *s) / *dl))));
    } else if (*s == 0 && *dl == 1) {
      len.set_dim_param(std::get<std::string>(*limit));
    } else {
      continue;
    }
    lengths.emplace_back(n.output(0), len);
  }
  if (lengths.empty()) return 0;
  std::unordered_map<std::string, onnx::ValueInfoProto> kept;
  for (const auto& vi : g.value_info())
    for (const auto& [name, len] : lengths)
      if (vi.name() == name) kept[name] = vi;
  g.clear_value_info();
  for (const auto& [name, len] : lengths) {
    onnx::ValueInfoProto* vi = g.add_value_info();
    if (auto k = kept.find(name); k != kept.end()) *vi = k->second;
    vi->set_name(name);
    auto* shape = vi->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    *shape->add_dim() = len;
  }
  return static_cast<int>(lengths.size());
}

}  // namespace fx
