// SPDX-License-Identifier: Apache-2.0
#include "runtime/lockstep.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

namespace fx {
namespace {

std::atomic<int64_t> g_recomputed{0};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A waiting worker gives up on a slice another has claimed after this many times the
// time a slice takes, timed as the team goes (slices are of one size, and the wait
// starts after the waiter's own slice, so the other should have finished by then unless
// the OS stopped it), plus a floor for the clock and a few cache misses. Before any
// slice was timed it waits.
constexpr int64_t kPatienceFactor = 2;
constexpr int64_t kPatienceFloorNs = 1000;
constexpr int kSpinsBeforeYield = 1 << 12;
constexpr int kSpinsPerClockRead = 64;
// Slices are of one size and a step's work does not change, so a sample of them tells
// how long one takes; reading the clock around each would cost a few percent of the
// smallest slices.
constexpr int64_t kTimedEvery = 8;

// Rounds are numbered from 1. For slice s: claimed[s], the last round a worker took it
// for compute; committing[s], the last round whose commit a worker won; done[s], the
// last round committed.
struct Lockstep {
  Lockstep(int slices, int64_t rounds)
      : rounds(rounds), claimed(slices), committing(slices), done(slices) {
    for (int s = 0; s < slices; ++s) claimed[s] = 0, committing[s] = 0, done[s] = 0;
  }
  const int64_t rounds;
  std::vector<std::atomic<int64_t>> claimed, committing, done;
  std::atomic<int64_t> round{1};  // open for compute; rounds + 1 when all are done
  std::atomic<int> arrivals{0};
  std::atomic<int64_t> recomputed{0};
  std::atomic<int64_t> typical_ns{0};  // how long a slice takes; 0 until one is timed
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;

  int slices() const { return static_cast<int>(done.size()); }
  bool complete(int64_t r) const {
    for (const auto& d : done)
      if (d.load(std::memory_order_acquire) < r) return false;
    return true;
  }
  void fail() {
    std::lock_guard lk(error_mutex);
    if (!error) error = std::current_exception();
    failed.store(true, std::memory_order_relaxed);
  }
  // Opens round r + 1 if all of round r is committed (any worker may; one wins).
  void advance(int64_t r) {
    if (complete(r)) round.compare_exchange_strong(r, r + 1, std::memory_order_acq_rel);
  }
};

// One worker of the team: its scratch index and how long its slices take.
struct Worker {
  Lockstep& ls;
  const LockstepWork& compute;
  const LockstepWork& commit;
  int index;
  int64_t computes = 0;

  bool claim(int s, int64_t r) {
    int64_t v = ls.claimed[s].load(std::memory_order_relaxed);
    while (v < r)
      if (ls.claimed[s].compare_exchange_weak(v, r, std::memory_order_acq_rel)) return true;
    return false;
  }

  // Computes slice s of round r (1-based) into this worker's scratch and commits it
  // unless another worker's commit came first.
  void run(int s, int64_t r) {
    if (!ls.failed.load(std::memory_order_relaxed)) {
      const bool timed = computes++ % kTimedEvery == 0;
      const int64_t t0 = timed ? now_ns() : 0;
      try {
        compute(r - 1, s, index);
      } catch (...) {
        ls.fail();
      }
      if (timed) {
        // The team's slice time falls at once to a faster slice and rises slowly after
        // a slow one (a worker descheduled inside it). Racing updates lose a sample.
        const int64_t dt = now_ns() - t0, t = ls.typical_ns.load(std::memory_order_relaxed);
        ls.typical_ns.store(t == 0 || dt < t ? dt : (7 * t + dt) / 8, std::memory_order_relaxed);
      }
    }
    int64_t expected = r - 1;
    if (!ls.committing[s].compare_exchange_strong(expected, r, std::memory_order_acq_rel)) return;
    if (!ls.failed.load(std::memory_order_relaxed)) {
      try {
        commit(r - 1, s, index);
      } catch (...) {
        ls.fail();
      }
    }
    ls.done[s].store(r, std::memory_order_release);
  }

  // Waits for the slices of round r others are computing; one that takes much longer
  // than a slice does is computed here too.
  void wait_or_redo(int64_t r) {
    const int n = ls.slices();
    int64_t since = now_ns();
    for (int spin = 1; ls.round.load(std::memory_order_acquire) == r && !ls.complete(r); ++spin) {
      const int64_t typical = ls.typical_ns.load(std::memory_order_relaxed);
      if (spin % kSpinsPerClockRead == 0 && typical > 0 &&
          now_ns() - since > kPatienceFactor * typical + kPatienceFloorNs) {
        for (int s = 0; s < n; ++s) {
          if (ls.committing[s].load(std::memory_order_acquire) >= r) continue;
          ls.recomputed.fetch_add(1, std::memory_order_relaxed);
          run(s, r);
        }
        since = now_ns();  // what is left is a commit under way
      }
      spin < kSpinsBeforeYield ? cpu_relax() : std::this_thread::yield();
    }
  }

  void loop() {
    const int n = ls.slices();
    const int home = index % n;
    for (int64_t r; (r = ls.round.load(std::memory_order_acquire)) <= ls.rounds;) {
      for (int k = 0; k < n; ++k) {
        const int s = (home + k) % n;
        if (ls.done[s].load(std::memory_order_acquire) < r && claim(s, r)) run(s, r);
      }
      if (!ls.complete(r)) wait_or_redo(r);
      ls.advance(r);
    }
  }
};

}  // namespace

int64_t lockstep_recomputed_slices() {
  return g_recomputed.load(std::memory_order_relaxed);
}

void run_lockstep(int64_t rounds, int slices, int threads, const LockstepWork& compute,
                  const LockstepWork& commit) {
  if (rounds <= 0 || slices <= 0) return;
  if (threads <= 1 || slices <= 1) {
    for (int64_t r = 0; r < rounds; ++r)
      for (int s = 0; s < slices; ++s) {
        compute(r, s, 0);
        commit(r, s, 0);
      }
    return;
  }
  const int team = std::min(slices, threads);
  auto ls = std::make_shared<Lockstep>(slices, rounds);
  // Workers are numbered in the order they arrive (the pool may run a chunk on the
  // caller or a worker); one that arrives after the last round finds nothing to do.
  std::function<void(int64_t)> chunk = [&, ls](int64_t) {
    const int me = ls->arrivals.fetch_add(1, std::memory_order_acq_rel);
    if (me >= team) return;
    ScopedThreads one(1);  // the work inside a slice stays on its thread
    Worker{*ls, compute, commit, me}.loop();
  };
  pool_run(team, team, chunk);
  if (ls->error) std::rethrow_exception(ls->error);
  if (const int64_t again = ls->recomputed.load()) {
    g_recomputed.fetch_add(again, std::memory_order_relaxed);
    spdlog::debug("lockstep: {} of {} slices computed again (a worker was late)", again,
                  rounds * slices);
  }
}

}  // namespace fx
