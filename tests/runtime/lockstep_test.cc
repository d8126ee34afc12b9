// SPDX-License-Identifier: Apache-2.0
// run_lockstep: every (round, slice) committed once, from the scratch of the worker that
// computed it, no compute of a round before all of the round before is committed, a
// small recurrence computed right, the team going on without a member the OS has taken
// away (a slice that never finishes in time is computed again), and a failure brought
// back.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/lockstep.h"
#include "runtime/thread_pool.h"

namespace fx {
namespace {

// A recurrence in the shape of a recurrent layer: slice s of round r reads every slice
// of round r - 1 (double-buffered, as h is) and writes its own. Atomics (relaxed) so
// that a late compute reading overwritten state is well defined; its commit is refused.
struct Recurrence {
  Recurrence(int64_t rounds, int slices, int workers)
      : rounds(rounds),
        slices(slices),
        state(2 * slices),
        scratch(workers),
        committed(static_cast<std::size_t>(rounds * slices)),
        per_round(rounds) {
    for (int s = 0; s < slices; ++s) state[s] = s + 1;
  }
  static uint64_t next(uint64_t sum, int64_t r, int s) {
    return sum * 6364136223846793005ull + static_cast<uint64_t>(r * 131 + s);
  }
  // The rounds one after another on one thread.
  std::vector<uint64_t> expected() const {
    std::vector<uint64_t> cur(static_cast<std::size_t>(slices));
    for (int s = 0; s < slices; ++s) cur[s] = s + 1;
    for (int64_t r = 0; r < rounds; ++r) {
      uint64_t sum = 0;
      for (uint64_t v : cur) sum += v;
      for (int s = 0; s < slices; ++s) cur[s] = next(sum, r, s);
    }
    return cur;
  }
  std::vector<uint64_t> result() const {
    std::vector<uint64_t> out;
    for (int s = 0; s < slices; ++s) out.push_back(state[(rounds & 1) * slices + s].load());
    return out;
  }

  void compute(int64_t r, int s, int w) {
    ASSERT_LT(w, static_cast<int>(scratch.size()));
    if (r > 0 && per_round[r - 1].load() != slices) ++early;
    uint64_t sum = 0;
    for (int k = 0; k < slices; ++k)
      sum += state[(r & 1) * slices + k].load(std::memory_order_relaxed);
    scratch[w].value = next(sum, r, s);
    scratch[w].round = r, scratch[w].slice = s;
  }
  void commit(int64_t r, int s, int w) {
    if (scratch[w].round != r || scratch[w].slice != s) ++foreign;
    state[((r + 1) & 1) * slices + s].store(scratch[w].value, std::memory_order_relaxed);
    ++committed[static_cast<std::size_t>(r * slices + s)];
    ++per_round[r];
  }
  LockstepWork compute_fn() {
    return [this](int64_t r, int s, int w) { compute(r, s, w); };
  }
  LockstepWork commit_fn() {
    return [this](int64_t r, int s, int w) { commit(r, s, w); };
  }
  void expect_right() const {
    EXPECT_EQ(early.load(), 0) << "a compute started before the round before was committed";
    EXPECT_EQ(foreign.load(), 0) << "a commit from scratch its worker did not compute";
    for (std::size_t i = 0; i < committed.size(); ++i)
      EXPECT_EQ(committed[i].load(), 1) << "work item " << i;
    EXPECT_EQ(result(), expected());
  }

  struct Scratch {
    uint64_t value = 0;
    int64_t round = -1;
    int slice = -1;
  };
  int64_t rounds;
  int slices;
  std::vector<std::atomic<uint64_t>> state;
  std::vector<Scratch> scratch;
  std::vector<std::atomic<int>> committed, per_round;
  std::atomic<int> early{0}, foreign{0};
};

void check_rounds(int64_t rounds, int slices, int threads) {
  SCOPED_TRACE(std::to_string(rounds) + " rounds, " + std::to_string(slices) + " slices, " +
               std::to_string(threads) + " threads");
  Recurrence rec(rounds, slices, std::max(1, std::min(slices, threads)));
  ScopedThreads scope(threads);
  run_lockstep(rounds, slices, threads, rec.compute_fn(), rec.commit_fn());
  rec.expect_right();
}

TEST(Lockstep, EveryRoundAfterTheOneBeforeOnOneAndSeveralThreads) {
  check_rounds(500, 2, 2);
  check_rounds(300, 3, 2);  // more slices than threads: the caller takes the rest
  check_rounds(300, 3, 3);
  check_rounds(50, 4, 1);
  check_rounds(0, 2, 2);
}

// The first compute of slice 0 stalls, as a thread the OS has descheduled would, until
// the other worker has finished every other round (or 10 s pass: a team that waits
// for its late member would end there). The other computes slice 0 again, the rounds go
// on, and the late member's result is refused. When no second worker shows up within a
// second (the pool ran the team on the caller alone, as it does for a while after a
// long wait), there is nobody to go on: the stall ends and the run is tried again.
TEST(Lockstep, ATeamGoesOnWithoutAMemberStoppedInsideASlice) {
  constexpr int64_t kRounds = 400;
  ScopedThreads scope(2);
  bool had_team = false;
  for (int attempt = 0; attempt < 5 && !had_team; ++attempt) {
    Recurrence rec(kRounds, 2, 2);
    std::atomic<bool> stalled{false}, timed_out{false};
    std::atomic<unsigned> workers_seen{0};
    const int64_t recomputed_before = lockstep_recomputed_slices();
    auto waited = [](auto done, std::chrono::milliseconds limit) {
      const auto until = std::chrono::steady_clock::now() + limit;
      while (!done())
        if (std::chrono::steady_clock::now() > until)
          return false;
        else
          std::this_thread::sleep_for(std::chrono::microseconds(200));
      return true;
    };
    run_lockstep(
        kRounds, 2, 2,
        [&](int64_t r, int s, int w) {
          workers_seen |= 1u << w;
          rec.compute(r, s, w);
          if (r != 0 || s != 0 || stalled.exchange(true)) return;
          if (!waited([&] { return workers_seen.load() == 3u; }, std::chrono::seconds(1))) return;
          had_team = true;
          timed_out = !waited([&] { return rec.per_round[kRounds - 1].load() == 2; },
                              std::chrono::seconds(10));
        },
        rec.commit_fn());
    rec.expect_right();
    if (!had_team) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    EXPECT_FALSE(timed_out.load()) << "the team waited for its stalled member";
    EXPECT_GE(lockstep_recomputed_slices() - recomputed_before, 1);
  }
  EXPECT_TRUE(had_team) << "no second worker joined in 5 tries";
}

TEST(Lockstep, AFailureComesBackAfterTheRoundsStop) {
  ScopedThreads scope(2);
  std::atomic<int> after{0};
  auto nothing = [](int64_t, int, int) {};
  EXPECT_THROW(run_lockstep(
                   100, 2, 2,
                   [&](int64_t r, int, int) {
                     if (r == 10) throw std::runtime_error("slice failed");
                     if (r > 10) ++after;
                   },
                   nothing),
               std::runtime_error);
  EXPECT_EQ(after.load(), 0);
}

}  // namespace
}  // namespace fx
