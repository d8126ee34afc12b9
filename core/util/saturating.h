// SPDX-License-Identifier: Apache-2.0
#pragma once
// Saturating int64 arithmetic for byte and element counts: a model may declare
// absurd dims, and a count that overflows must not turn negative.

#include <cstdint>
#include <limits>

namespace fx {

inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

inline int64_t sat_add(int64_t a, int64_t b) { return a > kInt64Max - b ? kInt64Max : a + b; }

inline int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kInt64Max / b ? kInt64Max : a * b;
}

}  // namespace fx
