// SPDX-License-Identifier: Apache-2.0
// Einsum by direct summation over every index combination: any number of inputs,
// "..." broadcasting, repeated letters (diagonals), implicit output (letters seen
// once, alphabetical). Reference speed: models that use Einsum for a matmul get it
// rewritten upstream, and no corpus model has it.

#include <algorithm>
#include <cctype>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

// The equation, parsed once: per input, its letters with "..." kept as '.'.
struct Equation {
  std::vector<std::string> inputs;
  std::string output;  // with '.' for "..."
  bool explicit_output = false;
};

Equation parse(const std::string& text) {
  std::string s;
  for (char ch : text)
    if (!std::isspace(static_cast<unsigned char>(ch))) s += ch;
  Equation e;
  std::string lhs = s;
  if (auto arrow = s.find("->"); arrow != std::string::npos) {
    lhs = s.substr(0, arrow);
    e.output = s.substr(arrow + 2);
    e.explicit_output = true;
  }
  auto compact = [&](std::string term) {
    std::string out;
    for (std::size_t i = 0; i < term.size(); ++i) {
      if (term.compare(i, 3, "...") == 0) {
        out += '.';
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
        out += term[i];
      } else {
        throw Error("Einsum: bad equation '" + text + "'");
      }
    }
    return out;
  };
  std::size_t start = 0;
  while (true) {
    std::size_t comma = lhs.find(',', start);
    e.inputs.push_back(compact(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  e.output = compact(e.output);
  return e;
}

void einsum_kernel(KernelContext& ctx, const Equation& eq) {
  const int n_in = ctx.num_inputs();
  if (n_in != static_cast<int>(eq.inputs.size()))
    throw Error("Einsum: equation has " + std::to_string(eq.inputs.size()) + " inputs, node has " +
                std::to_string(n_in));
  // Index ids: letters 0..51, ellipsis dims from 52 on (aligned to the right).
  int64_t ell_rank = 0;
  for (int i = 0; i < n_in; ++i) {
    const std::string& t = eq.inputs[static_cast<std::size_t>(i)];
    const int64_t letters =
        static_cast<int64_t>(std::count_if(t.begin(), t.end(), [](char c) { return c != '.'; }));
    const int64_t r = static_cast<int64_t>(ctx.in(i).rank());
    if (t.find('.') != std::string::npos)
      ell_rank = std::max(ell_rank, r - letters);
    else if (letters != r)
      throw Error("Einsum: term '" + t + "' does not match " + ctx.in(i).str());
  }
  auto letter_id = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + (c - 'A');
  };
  const int n_ids = 52 + static_cast<int>(ell_rank);
  std::vector<int64_t> size(static_cast<std::size_t>(n_ids), -1);
  std::vector<int> count(static_cast<std::size_t>(n_ids), 0);
  std::vector<std::vector<int>> ids(static_cast<std::size_t>(n_in));
  for (int i = 0; i < n_in; ++i) {
    const Tensor& x = ctx.in(i);
    const std::string& t = eq.inputs[static_cast<std::size_t>(i)];
    const int64_t letters =
        static_cast<int64_t>(std::count_if(t.begin(), t.end(), [](char c) { return c != '.'; }));
    auto& v = ids[static_cast<std::size_t>(i)];
    for (char c : t) {
      if (c == '.') {
        const int64_t e = static_cast<int64_t>(x.rank()) - letters;
        for (int64_t k = 0; k < e; ++k) v.push_back(static_cast<int>(52 + ell_rank - e + k));
      } else {
        v.push_back(letter_id(c));
      }
    }
    for (std::size_t d = 0; d < v.size(); ++d) {
      const int64_t dim = x.dims()[d];
      int64_t& s = size[static_cast<std::size_t>(v[d])];
      if (s == -1 || s == 1)
        s = dim;
      else if (dim != 1 && dim != s)
        throw Error("Einsum: index of term '" + t + "' has size " + std::to_string(dim) + " and " +
                    std::to_string(s));
      ++count[static_cast<std::size_t>(v[d])];
    }
  }
  std::vector<int> out_ids;
  if (eq.explicit_output) {
    for (char c : eq.output) {
      if (c == '.') {
        for (int64_t k = 0; k < ell_rank; ++k) out_ids.push_back(static_cast<int>(52 + k));
      } else {
        if (size[static_cast<std::size_t>(letter_id(c))] < 0)
          throw Error(std::string("Einsum: output letter '") + c + "' is in no input");
        out_ids.push_back(letter_id(c));
      }
    }
  } else {
    for (int64_t k = 0; k < ell_rank; ++k) out_ids.push_back(static_cast<int>(52 + k));
    for (int id = 0; id < 52; ++id)  // 'A'..'Z' sort before 'a'..'z'
      if (count[static_cast<std::size_t>((id + 26) % 52)] == 1) out_ids.push_back((id + 26) % 52);
  }
  std::vector<int> all = out_ids;
  for (int id = 0; id < n_ids; ++id)
    if (size[static_cast<std::size_t>(id)] >= 0 &&
        std::find(all.begin(), all.end(), id) == all.end())
      all.push_back(id);
  std::vector<int64_t> out_dims;
  for (int id : out_ids) out_dims.push_back(size[static_cast<std::size_t>(id)]);
  // Per input, the element stride of each position of `all` (0 where broadcast).
  std::vector<std::vector<int64_t>> strides(static_cast<std::size_t>(n_in),
                                            std::vector<int64_t>(all.size(), 0));
  for (int i = 0; i < n_in; ++i) {
    const Tensor& x = ctx.in(i);
    auto cs = contiguous_strides(x.dims());
    const auto& v = ids[static_cast<std::size_t>(i)];
    for (std::size_t d = 0; d < v.size(); ++d) {
      if (x.dims()[d] == 1) continue;
      auto pos = static_cast<std::size_t>(std::find(all.begin(), all.end(), v[d]) - all.begin());
      strides[static_cast<std::size_t>(i)][pos] += cs[d];
    }
  }
  const DType dt = ctx.in(0).dtype();
  Tensor& y = ctx.output(0, dt, out_dims);
  const int64_t out_n = y.numel();
  int64_t inner_n = 1;
  for (std::size_t k = out_ids.size(); k < all.size(); ++k)
    inner_n *= size[static_cast<std::size_t>(all[k])];
  dispatch_numeric(dt, "Einsum", [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    T* o = y.data<T>();
    std::vector<int64_t> idx(all.size(), 0);  // odometer over `all`, output positions first
    for (int64_t out = 0; out < out_n; ++out) {
      Acc acc = 0;
      for (int64_t in = 0; in < inner_n; ++in) {
        Acc prod = 1;
        for (int i = 0; i < n_in; ++i) {
          const auto& st = strides[static_cast<std::size_t>(i)];
          int64_t off = 0;
          for (std::size_t k = 0; k < all.size(); ++k) off += idx[k] * st[k];
          prod *= static_cast<Acc>(ctx.in(i).template data<T>()[off]);
        }
        acc += prod;
        for (std::size_t k = all.size(); k-- > 0;) {
          if (++idx[k] < size[static_cast<std::size_t>(all[k])]) break;
          idx[k] = 0;
        }
      }
      o[out] = static_cast<T>(acc);
      if (inner_n == 0) {  // nothing to sum: still advance the output positions
        for (std::size_t k = out_ids.size(); k-- > 0;) {
          if (++idx[k] < size[static_cast<std::size_t>(all[k])]) break;
          idx[k] = 0;
        }
      }
    }
  });
}

}  // namespace

void register_einsum_kernels(KernelTable& t) {
  t["Einsum"] = [](const Graph&, const Node& n) {
    Equation eq = parse(n.attrs.get_string("equation", ""));
    return fn_kernel([eq](KernelContext& ctx) { einsum_kernel(ctx, eq); });
  };
}

}  // namespace fx
