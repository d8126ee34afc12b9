// SPDX-License-Identifier: Apache-2.0
#include "profile/kernel_table.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

KernelStats k(std::string name, std::vector<std::string> ops, double us, double share) {
  KernelStats s;
  s.name = std::move(name);
  s.op_types = std::move(ops);
  s.median_us = us;
  s.share = share;
  s.calls = 1;
  s.bytes_read = 1 << 20;
  return s;
}

TEST(KernelTable, FormatsUnitsAndLimitsRows) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(3 << 20), "3.0 MiB");
  EXPECT_EQ(format_duration_us(12.34), "12.3 us");
  EXPECT_EQ(format_duration_us(4500), "4.50 ms");
  EXPECT_EQ(format_duration_us(2.5e6), "2.50 s");

  std::vector<KernelStats> rows = {k("conv_a", {"Conv"}, 600, 0.6), k("conv_b", {"Conv"}, 300, 0.3),
                                   k("relu", {"Relu"}, 100, 0.1)};
  std::string t = format_kernel_table(rows, 2);
  EXPECT_NE(t.find("conv_a"), std::string::npos);
  EXPECT_EQ(t.find("relu"), std::string::npos);
  EXPECT_NE(t.find("... 1 more kernels, 10.0% of the time"), std::string::npos) << t;
  // 1 MiB in 600 us = 1.75 GB/s.
  EXPECT_NE(t.find("1.75"), std::string::npos) << t;

  std::string ops = format_op_summary(rows);
  EXPECT_LT(ops.find("Conv"), ops.find("Relu"));
  EXPECT_NE(ops.find("2 kernels"), std::string::npos) << ops;
  EXPECT_NE(ops.find("90.0%"), std::string::npos) << ops;
}

}  // namespace
}  // namespace fx
