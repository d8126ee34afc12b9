// SPDX-License-Identifier: Apache-2.0
// run_lockstep: every (round, slice) once, no slice of a round before all of the round
// before, the caller alone when helpers are not there, and a failure brought back.

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "runtime/lockstep.h"
#include "runtime/thread_pool.h"

namespace fx {
namespace {

// Each slice of round r checks that every slice of round r - 1 has finished, then counts.
void check_rounds(int64_t rounds, int slices, int threads) {
  std::vector<std::atomic<int>> finished(static_cast<std::size_t>(rounds));
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(rounds * slices));
  std::atomic<int> early{0};
  ScopedThreads scope(threads);
  run_lockstep(rounds, slices, threads, [&](int64_t r, int s) {
    if (r > 0 && finished[static_cast<std::size_t>(r - 1)].load() != slices) ++early;
    ++runs[static_cast<std::size_t>(r * slices + s)];
    ++finished[static_cast<std::size_t>(r)];
  });
  EXPECT_EQ(early.load(), 0);
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "work item " << i;
}

TEST(Lockstep, EveryRoundAfterTheOneBeforeOnOneAndSeveralThreads) {
  check_rounds(500, 2, 2);
  check_rounds(300, 3, 2);  // more slices than threads: the caller takes the rest
  check_rounds(300, 3, 3);
  check_rounds(50, 4, 1);
  check_rounds(0, 2, 2);
}

TEST(Lockstep, AFailureComesBackAfterTheRoundsStop) {
  ScopedThreads scope(2);
  std::atomic<int> after{0};
  EXPECT_THROW(run_lockstep(100, 2, 2,
                            [&](int64_t r, int) {
                              if (r == 10) throw std::runtime_error("slice failed");
                              if (r > 10) ++after;
                            }),
               std::runtime_error);
  EXPECT_EQ(after.load(), 0);
}

}  // namespace
}  // namespace fx
