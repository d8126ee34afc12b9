// SPDX-License-Identifier: Apache-2.0
#include "runtime/lockstep.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

namespace fx {
namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Rounds are numbered from 1 (0: none published yet). claimed[s] and done[s] hold the
// last round whose slice s was claimed and finished.
struct Lockstep {
  explicit Lockstep(int slices) : claimed(slices), done(slices) {
    for (int s = 0; s < slices; ++s) claimed[s] = 0, done[s] = 0;
  }
  std::vector<std::atomic<int64_t>> claimed, done;
  std::atomic<int64_t> round{0};
  std::atomic<bool> finished{false}, failed{false};
  std::atomic<int> arrivals{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  bool claim(int s, int64_t r) {
    int64_t v = claimed[s].load(std::memory_order_relaxed);
    while (v < r)
      if (claimed[s].compare_exchange_weak(v, r, std::memory_order_acq_rel)) return true;
    return false;
  }
  // Runs slice s of round r (1-based) if nobody has; a failure is kept for the caller.
  void take(int s, int64_t r, const std::function<void(int64_t, int)>& work) {
    if (!claim(s, r)) return;
    if (!failed.load(std::memory_order_relaxed)) {
      try {
        work(r - 1, s);
      } catch (...) {
        std::lock_guard lk(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    done[s].store(r, std::memory_order_release);
  }
  // Every slice of round r, starting at `home` (a helper's own slice).
  void take_all(int home, int64_t r, const std::function<void(int64_t, int)>& work) {
    const int n = static_cast<int>(claimed.size());
    for (int k = 0; k < n; ++k) take((home + k) % n, r, work);
  }
};

constexpr int kSpinsBeforeYield = 1 << 12;

}  // namespace

void run_lockstep(int64_t rounds, int slices, int threads,
                  const std::function<void(int64_t, int)>& work) {
  if (rounds <= 0 || slices <= 0) return;
  if (threads <= 1 || slices <= 1) {
    for (int64_t r = 0; r < rounds; ++r)
      for (int s = 0; s < slices; ++s) work(r, s);
    return;
  }
  auto ls = std::make_shared<Lockstep>(slices);
  // The first thread to arrive drives (normally the caller, but the pool may hand this
  // chunk to a worker first); later ones help until the driver says it is finished. A
  // helper that arrives after the end finds nothing to do.
  std::function<void(int64_t)> chunk = [&, ls](int64_t) {
    const int me = ls->arrivals.fetch_add(1, std::memory_order_acq_rel);
    ScopedThreads one(1);  // the work inside a slice stays on its thread
    if (me == 0) {
      for (int64_t r = 1; r <= rounds; ++r) {
        ls->round.store(r, std::memory_order_release);
        ls->take_all(0, r, work);
        for (int s = 0; s < slices; ++s)
          for (int spin = 0; ls->done[s].load(std::memory_order_acquire) < r; ++spin)
            spin < kSpinsBeforeYield ? cpu_relax() : std::this_thread::yield();
      }
      ls->finished.store(true, std::memory_order_release);
      return;
    }
    const int home = me % slices;
    int64_t seen = 0;
    for (int spin = 0; !ls->finished.load(std::memory_order_acquire);) {
      const int64_t r = ls->round.load(std::memory_order_acquire);
      if (r > seen) {
        ls->take_all(home, r, work);
        seen = r;
        spin = 0;
        continue;
      }
      ++spin < kSpinsBeforeYield ? cpu_relax() : std::this_thread::yield();
    }
  };
  pool_run(std::min(slices, threads), std::min(slices, threads), chunk);
  if (ls->error) std::rethrow_exception(ls->error);
}

}  // namespace fx
