#pragma once
// The runtime's one thread pool is OpenMP's (oneDNN in Debian is built on it too).
// Kernels split work with parallel_for; the executor sets the team size per run.

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fx {

inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Calls f(begin, end) over [0, n) split into contiguous chunks, in parallel when
// the work (n * cost_per_item) is large enough to pay for waking threads.
template <class F>
void parallel_for(int64_t n, int64_t cost_per_item, F&& f) {
  if (n <= 0) return;
  constexpr int64_t kMinWork = 32768;
  int threads = max_threads();
  int64_t by_work = std::max<int64_t>(1, n * std::max<int64_t>(cost_per_item, 1) / kMinWork);
  int64_t chunks = std::min<int64_t>({static_cast<int64_t>(threads), n, by_work});
  if (chunks <= 1) {
    f(int64_t{0}, n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
#endif
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    if (b < e) f(b, e);
  }
}

}  // namespace fx
