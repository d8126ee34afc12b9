// SPDX-License-Identifier: Apache-2.0
#include "profile/kernel_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace fx {
namespace {

// Keeps the end of long names: it is the distinctive part of "/a/b/c/Conv".
std::string fit(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  return "..." + s.substr(s.size() - (width - 3));
}

std::string join_ops(const std::vector<std::string>& ops) {
  std::string s;
  for (const auto& o : ops) s += (s.empty() ? "" : "+") + o;
  return s.empty() ? "-" : s;
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string format_duration_us(double us) {
  if (us < 1000) return fmt::format("{:.1f} us", us);
  if (us < 1e6) return fmt::format("{:.2f} ms", us / 1e3);
  return fmt::format("{:.2f} s", us / 1e6);
}

std::string format_kernel_table(const std::vector<KernelStats>& kernels, std::size_t top) {
  std::string out = fmt::format("{:<36} {:<24} {:>5} {:>10} {:>6} {:>10} {:>8} {:>8}\n", "kernel",
                                "ops", "calls", "time", "share", "bytes", "GB/s", "GFLOP/s");
  const std::size_t shown = top == 0 ? kernels.size() : std::min(top, kernels.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& k = kernels[i];
    out += fmt::format("{:<36} {:<24} {:>5} {:>10} {:>5.1f}% {:>10} {:>8.2f} {:>8.2f}\n",
                       fit(k.name, 36), fit(join_ops(k.op_types), 24), k.calls,
                       format_duration_us(k.median_us), 100 * k.share, format_bytes(k.bytes()),
                       k.gb_per_s(), k.gflop_per_s());
  }
  if (shown < kernels.size()) {
    double rest = 0;
    for (std::size_t i = shown; i < kernels.size(); ++i) rest += kernels[i].share;
    out += fmt::format("... {} more kernels, {:.1f}% of the time\n", kernels.size() - shown,
                       100 * rest);
  }
  return out;
}

std::string format_op_summary(const std::vector<KernelStats>& kernels) {
  struct Row {
    std::string ops;
    int count = 0;
    double us = 0, share = 0;
  };
  std::vector<Row> rows;
  for (const auto& k : kernels) {
    std::string ops = join_ops(k.op_types);
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.ops == ops; });
    if (it == rows.end()) it = rows.insert(rows.end(), Row{ops});
    it->count += 1;
    it->us += k.median_us;
    it->share += k.share;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.us > b.us; });
  std::string out;
  for (const auto& r : rows)
    out +=
        fmt::format("{:<36} {:>5} {:<7} {:>10} {:>5.1f}%\n", fit(r.ops, 36), r.count,
                    r.count == 1 ? "kernel" : "kernels", format_duration_us(r.us), 100 * r.share);
  return out;
}

}  // namespace fx
