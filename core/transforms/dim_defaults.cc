// SPDX-License-Identifier: Apache-2.0
#include "transforms/dim_defaults.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

namespace fx::transforms {
namespace {

std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += char(std::tolower(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool any_of(const std::vector<std::string>& t, std::initializer_list<const char*> words) {
  for (const auto& x : t)
    for (const char* w : words)
      if (x == w) return true;
  return false;
}

bool contains(const std::string& lower, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    if (lower.find(p) != std::string::npos) return true;
  return false;
}

std::optional<DimKind> by_name(const std::string& symbol) {
  const auto t = tokens(symbol);
  std::string lower;
  for (const auto& x : t) lower += x + "_";
  if (any_of(t, {"batch", "bs", "n", "b", "batchsize"}) || contains(lower, {"batch", "num_images"}))
    return DimKind::Batch;
  if (any_of(t, {"seq", "sequence", "len", "length", "tokens", "token", "past", "time", "steps",
                 "frames", "src", "tgt"}) ||
      contains(lower, {"seq", "len", "token", "past"}))
    return DimKind::Sequence;
  if (any_of(t, {"height", "h"}) || contains(lower, {"height"})) return DimKind::Height;
  if (any_of(t, {"width", "w"}) || contains(lower, {"width"})) return DimKind::Width;
  return std::nullopt;
}

DimKind by_position(const InputSignature& in, std::size_t axis) {
  const std::size_t rank = in.shape.rank();
  const bool fp = dtype_is_float(in.dtype);
  if (rank == 4 && fp && axis == 2) return DimKind::Height;
  if (rank == 4 && fp && axis == 3) return DimKind::Width;
  if (axis == 0 && rank >= 2) return DimKind::Batch;
  if (axis == 1 && ((rank == 2 && !fp) || (rank == 3 && fp))) return DimKind::Sequence;
  return DimKind::Other;
}

}  // namespace

const char* dim_kind_name(DimKind k) {
  switch (k) {
    case DimKind::Batch: return "batch";
    case DimKind::Sequence: return "sequence";
    case DimKind::Samples: return "samples";
    case DimKind::Height: return "height";
    case DimKind::Width: return "width";
    case DimKind::Other: return "other";
  }
  return "other";
}

std::vector<AssumedDim> assume_dims(const std::vector<InputSignature>& inputs,
                                    const std::map<std::string, int64_t>& bound,
                                    const DimDefaults& defaults) {
  // A static sibling image input sets the spatial size.
  std::optional<int64_t> sibling_h, sibling_w;
  for (const auto& in : inputs) {
    if (in.shape.rank() != 4 || !dtype_is_float(in.dtype) || !in.shape[1].is_static()) continue;
    const int64_t channels = in.shape[1].value;
    if (channels != 1 && channels != 3 && channels != 4) continue;
    if (in.shape[2].is_static() && !sibling_h) sibling_h = in.shape[2].value;
    if (in.shape[3].is_static() && !sibling_w) sibling_w = in.shape[3].value;
  }
  // Symbols an integer input (token ids, lengths) uses are no waveform's.
  std::set<std::string> integer_symbols;
  for (const auto& in : inputs)
    if (in.shape.rank_known() && !dtype_is_float(in.dtype))
      for (std::size_t axis = 0; axis < in.shape.rank(); ++axis)
        integer_symbols.insert(in.shape[axis].symbol);
  std::vector<AssumedDim> out;
  std::set<std::string> seen;
  for (const auto& in : inputs) {
    if (!in.shape.rank_known()) continue;
    for (std::size_t axis = 0; axis < in.shape.rank(); ++axis) {
      const Dim& d = in.shape[axis];
      if (d.is_static() || d.symbol.empty() || bound.count(d.symbol) || seen.count(d.symbol))
        continue;
      seen.insert(d.symbol);
      AssumedDim a;
      a.symbol = d.symbol;
      a.input = in.name;
      a.axis = int(axis);
      a.kind = by_name(d.symbol).value_or(by_position(in, axis));
      if (a.kind == DimKind::Sequence && axis == 1 && in.shape.rank() == 2 &&
          dtype_is_float(in.dtype) && !integer_symbols.count(d.symbol))
        a.kind = DimKind::Samples;
      switch (a.kind) {
        case DimKind::Batch: a.value = defaults.batch; break;
        case DimKind::Sequence: a.value = defaults.sequence; break;
        case DimKind::Samples: a.value = defaults.samples; break;
        case DimKind::Height: a.value = sibling_h.value_or(defaults.image); break;
        case DimKind::Width: a.value = sibling_w.value_or(defaults.image); break;
        case DimKind::Other: a.value = defaults.other; break;
      }
      out.push_back(std::move(a));
    }
  }
  return out;
}

std::string assumed_dims_text(const std::vector<AssumedDim>& dims) {
  if (dims.empty()) return {};
  std::string s = "assumed: ";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i].symbol + "=" + std::to_string(dims[i].value);
  return s + "; bind with --dim NAME=V";
}

}  // namespace fx::transforms
