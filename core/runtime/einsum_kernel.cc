// SPDX-License-Identifier: Apache-2.0
// Einsum by direct summation over every index combination: any number of inputs,
// "..." broadcasting, repeated letters (diagonals), implicit output (letters seen
// once, alphabetical). Two float32 inputs whose letters split into batch, row, column
// and contracted ones (attention's "bhid,bhjd->bhij", MaxViT's) are a batched matrix
// product instead: each batch's operands are packed and multiplied by oneDNN's sgemm.

#include <algorithm>
#include <cctype>

#include <dnnl.h>

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

// Element offsets of every combination of the index positions `pos` (row-major over
// them), given each position's size and stride.
std::vector<int64_t> offsets_over(const std::vector<std::size_t>& pos,
                                  const std::vector<int64_t>& sizes,
                                  const std::vector<int64_t>& strides) {
  std::vector<int64_t> out{0};
  for (std::size_t p : pos) {
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<std::size_t>(sizes[p]));
    for (int64_t base : out)
      for (int64_t i = 0; i < sizes[p]; ++i) next.push_back(base + i * strides[p]);
    out = std::move(next);
  }
  return out;
}

// The batched-matmul form: true when it ran. `all` lists the index ids, output ones
// first; `strides[i][k]` is input i's stride along all[k] (0: absent or broadcast).
bool einsum_as_matmul(KernelContext& ctx, const std::vector<std::vector<int>>& ids,
                      const std::vector<int>& all, std::size_t n_out,
                      const std::vector<int64_t>& size_of_all,
                      const std::vector<std::vector<int64_t>>& strides, Tensor& y) {
  if (ids.size() != 2 || ctx.in(0).dtype() != DType::Float32 || ctx.in(1).dtype() != DType::Float32)
    return false;
  for (const auto& v : ids) {  // a repeated letter is a diagonal
    std::vector<int> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
  }
  auto in_term = [&](int i, int id) {
    const auto& v = ids[static_cast<std::size_t>(i)];
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  std::vector<std::size_t> batch, rows, cols, inner;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const bool a = in_term(0, all[k]), b = in_term(1, all[k]);
    if (k < n_out)
      (a && b ? batch : a ? rows : cols).push_back(k);
    else if (a && b)
      inner.push_back(k);
    else
      return false;  // summed over one input alone
  }
  const auto ostrides = contiguous_strides(y.dims());
  std::vector<int64_t> ys(all.size(), 0);
  for (std::size_t k = 0; k < n_out; ++k) ys[k] = ostrides[k];
  const auto& sa = strides[0];
  const auto& sb = strides[1];
  const auto a_b = offsets_over(batch, size_of_all, sa), b_b = offsets_over(batch, size_of_all, sb),
             y_b = offsets_over(batch, size_of_all, ys);
  const auto a_m = offsets_over(rows, size_of_all, sa), y_m = offsets_over(rows, size_of_all, ys);
  const auto b_n = offsets_over(cols, size_of_all, sb), y_n = offsets_over(cols, size_of_all, ys);
  const auto a_k = offsets_over(inner, size_of_all, sa), b_k = offsets_over(inner, size_of_all, sb);
  const auto M = static_cast<int64_t>(a_m.size()), N = static_cast<int64_t>(b_n.size()),
             K = static_cast<int64_t>(a_k.size());
  const float* A = ctx.in(0).data<float>();
  const float* B = ctx.in(1).data<float>();
  float* Y = y.data<float>();
  std::vector<float> ap(static_cast<std::size_t>(M * K)), bp(static_cast<std::size_t>(K * N)),
      cp(static_cast<std::size_t>(M * N));
  for (std::size_t bi = 0; bi < a_b.size(); ++bi) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k)
        ap[static_cast<std::size_t>(m * K + k)] =
            A[a_b[bi] + a_m[static_cast<std::size_t>(m)] + a_k[static_cast<std::size_t>(k)]];
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        bp[static_cast<std::size_t>(k * N + n)] =
            B[b_b[bi] + b_k[static_cast<std::size_t>(k)] + b_n[static_cast<std::size_t>(n)]];
    if (K == 0)
      std::fill(cp.begin(), cp.end(), 0.f);
    else if (dnnl_sgemm('N', 'N', M, N, K, 1.f, ap.data(), K, bp.data(), N, 0.f, cp.data(), N) !=
             dnnl_success)
      throw Error("Einsum: oneDNN sgemm failed");
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        Y[y_b[bi] + y_m[static_cast<std::size_t>(m)] + y_n[static_cast<std::size_t>(n)]] =
            cp[static_cast<std::size_t>(m * N + n)];
  }
  return true;
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
  {
    std::vector<int64_t> size_of_all;
    for (int id : all) size_of_all.push_back(size[static_cast<std::size_t>(id)]);
    if (y.numel() > 0 && einsum_as_matmul(ctx, ids, all, out_ids.size(), size_of_all, strides, y))
      return;
  }
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
