// SPDX-License-Identifier: Apache-2.0
// The runtime's thread pool: every chunk runs exactly once, whatever the thread
// count, from nested calls and from several callers at once.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/parallel.h"
#include "runtime/thread_pool.h"

namespace fx {
namespace {

TEST(ThreadPool, EveryChunkOnceForAnyThreadCount) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> hits(1000);
    pool_run(1000, threads, [&](int64_t c) { hits[static_cast<std::size_t>(c)]++; });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1) << threads;
  }
}

TEST(ThreadPool, NestedCallsRunInline) {
  std::atomic<int> inner{0};
  pool_run(8, 2, [&](int64_t) { pool_run(4, 2, [&](int64_t) { inner++; }); });
  EXPECT_EQ(inner.load(), 32);
}

TEST(ThreadPool, ConcurrentCallersEachGetAllTheirChunks) {
  std::vector<std::thread> callers;
  std::vector<std::atomic<int>> sums(4);
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) pool_run(64, 2, [&](int64_t) { sums[t]++; });
    });
  }
  for (auto& c : callers) c.join();
  for (auto& s : sums) EXPECT_EQ(s.load(), 50 * 64);
}

TEST(ThreadPool, ParallelForCoversTheRangeUnderScopedThreads) {
  ScopedThreads scope(2);
  EXPECT_EQ(current_threads(), 2);
  const int64_t n = 1 << 20;
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  parallel_for(n, 4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[static_cast<std::size_t>(i)]++;
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], 1) << i;
}

}  // namespace
}  // namespace fx
