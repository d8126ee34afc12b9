// SPDX-License-Identifier: Apache-2.0
#pragma once
// How kernels split work: parallel_for over the runtime's thread pool
// (runtime/thread_pool.h). oneDNN runs on its own OpenMP team of the same size;
// the executor sets both per run.

#include <algorithm>
#include <cstdint>
#include <functional>

#include "runtime/thread_pool.h"

namespace fx {

inline int max_threads() {
  return current_threads();
}

// Calls f(begin, end) over [0, n) split into contiguous chunks, in parallel when
// the work (n * cost_per_item) is large enough to pay for waking threads. A cost
// unit is roughly one simple operation on one element: waking a worker costs tens
// of microseconds, so anything under ~256K units runs on the calling thread.
template <class F>
void parallel_for(int64_t n, int64_t cost_per_item, F&& f) {
  if (n <= 0) return;
  constexpr int64_t kMinWork = 262144;
  const int threads = max_threads();
  const int64_t work = n * std::max<int64_t>(cost_per_item, 1);
  if (threads <= 1 || work < kMinWork) {
    f(int64_t{0}, n);
    return;
  }
  // A few chunks per thread, so that a thread that starts late takes fewer.
  const int64_t chunks = std::min<int64_t>({int64_t{threads} * 4, n, work / (kMinWork / 4)});
  if (chunks <= 1) {
    f(int64_t{0}, n);
    return;
  }
  std::function<void(int64_t)> chunk = [&](int64_t c) {
    int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    if (b < e) f(b, e);
  };
  pool_run(chunks, threads, chunk);
}

}  // namespace fx
