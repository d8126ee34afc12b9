// SPDX-License-Identifier: Apache-2.0
#include "profile/kernel_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "profile/kernel_table.h"

namespace fx {
namespace {

// Union-find over kernel indices (A's first, then B's).
struct Groups {
  std::vector<std::size_t> parent;
  explicit Groups(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  std::size_t find(std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  // The smaller index stays the root, so a row is ordered by its first A kernel.
  void join(std::size_t a, std::size_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

void add_ops(std::vector<std::string>& into, const std::vector<std::string>& ops) {
  for (const auto& op : ops)
    if (std::find(into.begin(), into.end(), op) == into.end()) into.push_back(op);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

std::string fit(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : "..." + s.substr(s.size() - (width - 3));
}

}  // namespace

double KernelComparison::ratio() const {
  return a_us > 0 && b_us > 0 && !kernels_a.empty() && !kernels_b.empty() ? b_us / a_us : 0.0;
}

std::vector<KernelComparison> compare_kernels(const std::vector<KernelStats>& a,
                                              const std::vector<KernelStats>& b) {
  const std::size_t n = a.size() + b.size();
  Groups groups(n);
  std::map<std::string, std::size_t> owner;  // node (or kernel) name -> first kernel index
  auto link = [&](std::size_t index, const KernelStats& k) {
    const std::vector<std::string> keys = k.nodes.empty() ? std::vector{k.name} : k.nodes;
    for (const auto& key : keys) {
      auto [it, fresh] = owner.try_emplace(key, index);
      if (!fresh) groups.join(it->second, index);
    }
  };
  for (std::size_t i = 0; i < a.size(); ++i) link(i, a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) link(a.size() + i, b[i]);

  std::map<std::size_t, std::size_t> row_of_root;
  std::vector<KernelComparison> rows;
  for (std::size_t i = 0; i < n; ++i) {
    auto [it, fresh] = row_of_root.try_emplace(groups.find(i), rows.size());
    if (fresh) rows.emplace_back();
    KernelComparison& row = rows[it->second];
    const bool side_a = i < a.size();
    const KernelStats& k = side_a ? a[i] : b[i - a.size()];
    (side_a ? row.kernels_a : row.kernels_b).push_back(k.name);
    (side_a ? row.a_us : row.b_us) += k.median_us;
    if (side_a || row.kernels_a.empty()) add_ops(row.op_types, k.op_types);
  }
  return rows;
}

std::string format_comparison_table(const std::vector<KernelComparison>& rows,
                                    const std::string& label_a, const std::string& label_b,
                                    std::size_t top) {
  std::string out = fmt::format("{:<40} {:<22} {:>11} {:>11} {:>7}\n", "kernel", "ops",
                                fit(label_a, 11), fit(label_b, 11), "B/A");
  double total_a = 0, total_b = 0;
  int only_a = 0, only_b = 0;
  for (const auto& r : rows) {
    total_a += r.a_us, total_b += r.b_us;
    only_a += r.kernels_b.empty(), only_b += r.kernels_a.empty();
  }
  const std::size_t shown = top == 0 ? rows.size() : std::min(top, rows.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = rows[i];
    std::string name = join(r.kernels_a.empty() ? r.kernels_b : r.kernels_a, " + ");
    out += fmt::format("{:<40} {:<22} {:>11} {:>11} {:>7}\n", fit(name, 40),
                       fit(join(r.op_types, "+"), 22),
                       r.kernels_a.empty() ? "-" : format_duration_us(r.a_us),
                       r.kernels_b.empty() ? "-" : format_duration_us(r.b_us),
                       r.ratio() > 0 ? fmt::format("{:.2f}x", r.ratio()) : "-");
  }
  if (shown < rows.size()) out += fmt::format("... {} more rows\n", rows.size() - shown);
  out += fmt::format("{:<40} {:<22} {:>11} {:>11} {:>7}\n", "total", "",
                     format_duration_us(total_a), format_duration_us(total_b),
                     total_a > 0 ? fmt::format("{:.2f}x", total_b / total_a) : "-");
  if (only_a || only_b)
    out += fmt::format("{} row(s) only in {}, {} only in {}\n", only_a, label_a, only_b, label_b);
  return out;
}

}  // namespace fx
