// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two per-kernel tables side by side: ours against another tool's trace, or unfused
// against fused. Kernels are matched through the graph nodes they cover: kernels on
// either side that share a node end up in one row (so a fused kernel on one side is
// compared with the several kernels it replaced on the other). A kernel without node
// names is keyed by its own name.
//
//   rows = compare_kernels(ours.kernels, aggregate_kernels(read_trace("ort.json")));

#include <string>
#include <vector>

#include "profile/timeline.h"

namespace fx {

struct KernelComparison {
  std::vector<std::string> kernels_a;  // kernel names on side A (empty: absent there)
  std::vector<std::string> kernels_b;
  std::vector<std::string> op_types;  // of side A, else B (distinct, in order)
  double a_us = 0;                    // summed median time of kernels_a
  double b_us = 0;

  // b_us / a_us; 0 when either side is absent.
  double ratio() const;
};

// Rows in order of A's table (slowest first), then rows found only in B.
std::vector<KernelComparison> compare_kernels(const std::vector<KernelStats>& a,
                                              const std::vector<KernelStats>& b);

// Text table: kernel(s), ops, time A, time B, B/A; `top` rows (0: all) and totals.
std::string format_comparison_table(const std::vector<KernelComparison>& rows,
                                    const std::string& label_a, const std::string& label_b,
                                    std::size_t top = 0);

}  // namespace fx
