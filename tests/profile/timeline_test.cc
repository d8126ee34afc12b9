// SPDX-License-Identifier: Apache-2.0
#include "profile/timeline.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

KernelEvent ev(std::string name, int run, double start, double dur, int64_t rd = 0,
               int64_t wr = 0) {
  KernelEvent e;
  e.name = std::move(name);
  e.op_types = {"Relu"};
  e.run = run;
  e.start_us = start;
  e.duration_us = dur;
  e.bytes_read = rd;
  e.bytes_written = wr;
  return e;
}

TEST(TimelineMedian, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Timeline, RunsSpansAndKernelTime) {
  Timeline t;
  t.events = {ev("a", 0, 0, 10), ev("b", 0, 12, 5), ev("a", 1, 100, 20), ev("b", 1, 125, 5)};
  EXPECT_EQ(t.run_count(), 2);
  EXPECT_DOUBLE_EQ(t.kernel_time_us(0), 15);
  EXPECT_DOUBLE_EQ(t.kernel_time_us(1), 25);
  EXPECT_DOUBLE_EQ(t.span_us(0), 17);  // 0 .. 12+5
  EXPECT_DOUBLE_EQ(t.span_us(1), 30);  // 100 .. 130

  Timeline one = t.single_run(1);
  ASSERT_EQ(one.events.size(), 2u);
  EXPECT_DOUBLE_EQ(one.events[0].start_us, 0);  // re-based
  EXPECT_DOUBLE_EQ(one.events[1].start_us, 25);
  EXPECT_EQ(one.events[1].run, 0);
}

TEST(Timeline, AggregatesMedianPerKernelAcrossRuns) {
  Timeline t;
  // Kernel "conv" runs once per run: 10, 30, 20 us -> median 20.
  // Kernel "relu" runs twice per run (same name): 2+2, 2+4, 100+1 -> median 6.
  const double conv[] = {10, 30, 20};
  const double relu[][2] = {{2, 2}, {2, 4}, {100, 1}};
  for (int r = 0; r < 3; ++r) {
    t.events.push_back(ev("conv", r, 0, conv[r], 1000, 500));
    t.events.push_back(ev("relu", r, 40, relu[r][0], 100, 100));
    t.events.push_back(ev("relu", r, 50, relu[r][1], 100, 100));
  }
  auto rows = aggregate_kernels(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "conv");  // longest first
  EXPECT_DOUBLE_EQ(rows[0].median_us, 20);
  EXPECT_DOUBLE_EQ(rows[0].min_us, 10);
  EXPECT_DOUBLE_EQ(rows[0].max_us, 30);
  EXPECT_EQ(rows[0].calls, 1);
  EXPECT_EQ(rows[1].name, "relu");
  EXPECT_DOUBLE_EQ(rows[1].median_us, 6);
  EXPECT_EQ(rows[1].calls, 2);
  EXPECT_EQ(rows[1].bytes_read, 200);  // per run, both calls
  EXPECT_NEAR(rows[0].share, 20.0 / 26.0, 1e-12);
  EXPECT_NEAR(rows[0].share + rows[1].share, 1.0, 1e-12);
  // 1500 bytes in 20 us = 75e6 B/s = 0.075 GB/s.
  EXPECT_NEAR(rows[0].gb_per_s(), 0.075, 1e-12);

  // Run totals: 10+4=14... run 0: 14, run 1: 36, run 2: 121 -> median 36, run 1.
  EXPECT_DOUBLE_EQ(median_run_us(t), 36);
  EXPECT_EQ(representative_run(t), 1);
}

TEST(Timeline, KernelMissingFromARunCountsAsZeroThere) {
  Timeline t;
  t.events = {ev("a", 0, 0, 10), ev("a", 1, 0, 12), ev("b", 1, 20, 9), ev("a", 2, 0, 11)};
  auto rows = aggregate_kernels(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].name, "b");
  EXPECT_DOUBLE_EQ(rows[1].median_us, 0);  // 0, 9, 0
  EXPECT_DOUBLE_EQ(rows[1].max_us, 9);
  EXPECT_DOUBLE_EQ(rows[1].gb_per_s(), 0);
}

}  // namespace
}  // namespace fx
