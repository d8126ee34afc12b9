// SPDX-License-Identifier: Apache-2.0
// Kernels that take or make string tensors: Cast and CastLike to and from string (the
// numeric forms stay the shape family's kernel), StringNormalizer, and TfIdfVectorizer
// (n-gram counts over int32, int64 or string tokens). Numbers are written as numpy
// writes them (shortest text that reads back to the same value; NaN, INF, -INF) and
// read with strtod's rules (which take "INF", "+INF", "NaN" in any case).

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "runtime/half.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

std::vector<std::string> strings_attr(const Node& n, const std::string& name) {
  const AttributeValue* v = n.attrs.find(name);
  if (!v) return {};
  if (const auto* s = std::get_if<std::vector<std::string>>(v)) return *s;
  throw Error(n.op_type + ": attribute " + name + " is not a list of strings");
}

template <class T>
std::string number_text(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  } else {
    return std::to_string(v);
  }
}

template <class T>
T parse_number(const std::string& s, const std::string& step) {
  const char* b = s.c_str();
  char* end = nullptr;
  errno = 0;
  T v;
  if constexpr (std::is_floating_point_v<T>) {
    v = static_cast<T>(std::strtod(b, &end));
  } else if constexpr (std::is_signed_v<T>) {
    v = static_cast<T>(std::strtoll(b, &end, 10));
  } else {
    v = static_cast<T>(std::strtoull(b, &end, 10));
  }
  if (end == b) throw Error(step + ": cannot read '" + s + "' as a number");
  return v;
}

void cast_to_string(const Tensor& x, Tensor& y) {
  std::string* out = y.data<std::string>();
  const int64_t n = x.numel();
  if (x.is_string()) {
    std::copy(x.data<std::string>(), x.data<std::string>() + n, out);
    return;
  }
  if (x.dtype() == DType::Bool) {
    for (int64_t i = 0; i < n; ++i) out[i] = x.data<uint8_t>()[i] ? "True" : "False";
    return;
  }
  dispatch_all(x.dtype(), "Cast", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) out[i] = number_text(x.data<T>()[i]);
  });
}

void cast_from_string(const Tensor& x, Tensor& y, const std::string& step) {
  const std::string* in = x.data<std::string>();
  const int64_t n = x.numel();
  if (y.dtype() == DType::Bool) {
    for (int64_t i = 0; i < n; ++i) y.data<uint8_t>()[i] = parse_number<double>(in[i], step) != 0;
    return;
  }
  dispatch_all(y.dtype(), "Cast", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) y.data<T>()[i] = parse_number<T>(in[i], step);
  });
}

// Cast/CastLike whose input or target is a string; the numeric kernel `base` otherwise.
std::shared_ptr<Kernel> string_cast(std::shared_ptr<Kernel> base, DType to_attr, bool like) {
  auto numeric = std::shared_ptr<Kernel>(std::move(base));
  return fn_kernel([numeric, to_attr, like](KernelContext& ctx) {
    const Tensor& x = ctx.in(0);
    const DType to = like ? ctx.in(1).dtype() : to_attr;
    if (!x.is_string() && to != DType::String) {
      if (!numeric) throw Error("Cast: unsupported target type " + std::string(dtype_name(to)));
      return numeric->run(ctx);
    }
    // A half target is computed as float32 and narrowed by the half adapter.
    Tensor& y = ctx.output(0, dtype_is_half(to) ? DType::Float32 : to, x.dims());
    if (to == DType::String)
      cast_to_string(x, y);
    else
      cast_from_string(x, y, ctx.step_name());
  });
}

std::string change_case(std::string s, int action) {
  if (action > 0)
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (action < 0)
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// StringNormalizer (opset 10): drops stopwords, then changes case (ASCII letters).
// [C] or [1, C] in; the kept strings out, or one empty string when none is kept.
std::shared_ptr<Kernel> string_normalizer(const Node& n) {
  const std::string action = n.attrs.get_string("case_change_action", "NONE");
  int act = 0;
  if (action == "UPPER")
    act = 1;
  else if (action == "LOWER")
    act = -1;
  else if (action != "NONE")
    throw Error("StringNormalizer: unknown case_change_action '" + action + "'");
  const bool sensitive = n.attrs.get_int("is_case_sensitive", 0) != 0;
  std::set<std::string> stop;
  for (const auto& w : strings_attr(n, "stopwords"))
    stop.insert(sensitive ? w : change_case(w, -1));
  return fn_kernel([act, sensitive, stop](KernelContext& ctx) {
    const Tensor& x = ctx.in(0);
    if (!x.is_string()) throw Error("StringNormalizer: expects a string tensor, got " + x.str());
    const bool two_d = x.rank() == 2;
    if (!(x.rank() == 1 || (two_d && x.dim(0) == 1)))
      throw Error("StringNormalizer: expects [C] or [1, C], got " + x.str());
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string& s = x.data<std::string>()[i];
      if (stop.count(sensitive ? s : change_case(s, -1))) continue;
      kept.push_back(change_case(s, act));
    }
    if (kept.empty()) kept.emplace_back();
    const auto c = static_cast<int64_t>(kept.size());
    Tensor& y =
        ctx.output(0, DType::String, two_d ? std::vector<int64_t>{1, c} : std::vector<int64_t>{c});
    std::move(kept.begin(), kept.end(), y.data<std::string>());
  });
}

// TfIdfVectorizer (opset 9): counts the pool's n-grams in each row, with skips between
// an n-gram's items (each skip distance 1 .. max_skip_count + 1; unigrams counted once),
// then weighs them (TF: count, IDF: weight where present, TFIDF: count * weight).
struct TfIdfAttrs {
  int64_t min_n = 1, max_n = 1, max_skip = 0;
  enum Mode { TF, IDF, TFIDF } mode = TF;
  std::vector<float> weights;
  int64_t width = 0;  // output columns: max(ngram_indexes) + 1
  std::map<std::vector<int64_t>, int64_t> int_grams;
  std::map<std::vector<std::string>, int64_t> string_grams;
};

template <class Item>
void add_pool(const std::vector<Item>& pool, const std::vector<int64_t>& counts,
              const std::vector<int64_t>& indexes, std::map<std::vector<Item>, int64_t>& grams) {
  std::size_t next_index = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k) + 1;
    const int64_t begin = counts[k];
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n)
      throw Error("TfIdfVectorizer: ngram_counts do not split the pool into n-grams");
    for (int64_t i = begin; i < end; i += n) {
      if (next_index >= indexes.size())
        throw Error("TfIdfVectorizer: fewer ngram_indexes than n-grams in the pool");
      grams[std::vector<Item>(pool.begin() + i, pool.begin() + i + n)] = indexes[next_index++];
    }
  }
}

template <class Item, class Get>
void count_row(const TfIdfAttrs& a, const std::map<std::vector<Item>, int64_t>& grams, int64_t len,
               Get&& item, float* out) {
  std::vector<Item> gram;
  int64_t first_n = a.min_n;
  for (int64_t d = 1; d <= a.max_skip + 1; ++d) {
    for (int64_t s = 0; s < len; ++s) {
      gram.clear();
      for (int64_t n = 1; n <= a.max_n && s + (n - 1) * d < len; ++n) {
        gram.push_back(item(s + (n - 1) * d));
        if (n < first_n) continue;
        if (auto it = grams.find(gram); it != grams.end()) out[it->second] += 1;
      }
    }
    if (first_n == 1) first_n = 2;  // unigrams do not depend on the skip
    if (first_n > a.max_n) break;
  }
}

void tfidf(KernelContext& ctx, const TfIdfAttrs& a) {
  const Tensor& x = ctx.in(0);
  if (x.rank() != 1 && x.rank() != 2)
    throw Error("TfIdfVectorizer: expects [C] or [N, C], got " + x.str());
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1, len = x.dim(-1);
  Tensor& y = ctx.output(
      0, DType::Float32,
      x.rank() == 2 ? std::vector<int64_t>{rows, a.width} : std::vector<int64_t>{a.width});
  float* out = y.data<float>();
  std::fill(out, out + y.numel(), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + r * a.width;
    const int64_t base = r * len;
    switch (x.dtype()) {
      case DType::String: {
        const std::string* p = x.data<std::string>() + base;
        count_row<std::string>(
            a, a.string_grams, len, [p](int64_t i) { return p[i]; }, o);
        break;
      }
      case DType::Int32: {
        const int32_t* p = x.data<int32_t>() + base;
        count_row<int64_t>(
            a, a.int_grams, len, [p](int64_t i) { return int64_t{p[i]}; }, o);
        break;
      }
      case DType::Int64: {
        const int64_t* p = x.data<int64_t>() + base;
        count_row<int64_t>(
            a, a.int_grams, len, [p](int64_t i) { return p[i]; }, o);
        break;
      }
      default:
        throw Error("TfIdfVectorizer: expects string, int32 or int64 tokens, got " + x.str());
    }
    for (int64_t i = 0; i < a.width; ++i) {
      const float w = a.weights.empty() ? 1.0f : a.weights[static_cast<std::size_t>(i)];
      if (a.mode == TfIdfAttrs::IDF) o[i] = o[i] > 0 ? w : 0.0f;
      if (a.mode == TfIdfAttrs::TFIDF) o[i] *= w;
    }
  }
}

std::shared_ptr<Kernel> tfidf_vectorizer(const Node& n) {
  TfIdfAttrs a;
  a.min_n = n.attrs.get_int("min_gram_length", 1);
  a.max_n = n.attrs.get_int("max_gram_length", 1);
  a.max_skip = n.attrs.get_int("max_skip_count", 0);
  if (a.min_n < 1 || a.max_n < a.min_n || a.max_skip < 0)
    throw Error(
        "TfIdfVectorizer: need 1 <= min_gram_length <= max_gram_length, max_skip_count >= 0");
  const std::string mode = n.attrs.get_string("mode", "TF");
  if (mode == "IDF")
    a.mode = TfIdfAttrs::IDF;
  else if (mode == "TFIDF")
    a.mode = TfIdfAttrs::TFIDF;
  else if (mode != "TF")
    throw Error("TfIdfVectorizer: unknown mode '" + mode + "'");
  const auto counts = n.attrs.get_ints("ngram_counts");
  const auto indexes = n.attrs.get_ints("ngram_indexes");
  for (int64_t i : indexes) {
    if (i < 0) throw Error("TfIdfVectorizer: negative ngram_indexes");
    a.width = std::max(a.width, i + 1);
  }
  a.weights = n.attrs.get_floats("weights");
  if (!a.weights.empty() && static_cast<int64_t>(a.weights.size()) < a.width)
    throw Error("TfIdfVectorizer: fewer weights than output columns");
  if (n.attrs.has("pool_strings"))
    add_pool(strings_attr(n, "pool_strings"), counts, indexes, a.string_grams);
  else
    add_pool(n.attrs.get_ints("pool_int64s"), counts, indexes, a.int_grams);
  return fn_kernel([a](KernelContext& ctx) { tfidf(ctx, a); });
}

}  // namespace

void register_string_kernels(KernelTable& t) {
  const KernelFactory cast = t.at("Cast"), cast_like = t.at("CastLike");
  t["Cast"] = [cast](const Graph& g, const Node& n) {
    const auto to = static_cast<DType>(n.attrs.get_int("to", 0));
    return string_cast(to == DType::String ? nullptr : cast(g, n), to, false);
  };
  t["CastLike"] = [cast_like](const Graph& g, const Node& n) {
    return string_cast(cast_like(g, n), DType::Undefined, true);
  };
  t["StringNormalizer"] = [](const Graph&, const Node& n) { return string_normalizer(n); };
  t["TfIdfVectorizer"] = [](const Graph&, const Node& n) { return tfidf_vectorizer(n); };
}

bool takes_strings(const std::string& op_type) {
  static const std::set<std::string> ops = {
      "Cast", "CastLike", "StringNormalizer", "TfIdfVectorizer", "Identity", "Reshape", "Flatten",
      "Squeeze", "Unsqueeze", "Shape", "Size", "Constant", "If", "Loop", "Scan",
      // Sequences and optionals hold string
      // tensors as they are (clones, not bytes).
      "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceLength",
      "SequenceErase", "Optional", "OptionalHasElement", "OptionalGetElement"};
  return ops.count(op_type) != 0;
}

}  // namespace fx
