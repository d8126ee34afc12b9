// SPDX-License-Identifier: Apache-2.0
// Every registered op has a speed class (runtime/kernel_speed.h): what `fxc ops`,
// docs/operators.md and the corpus table's reference-speed column read.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_speed.h"
#include "util/error.h"

namespace fx {
namespace {

TEST(KernelSpeed, EveryRegisteredOpHasExactlyOneMark) {
  const auto speeds = op_speeds();
  std::multiset<std::string> marked;
  for (const auto& s : speeds) {
    marked.insert(s.op);
    EXPECT_FALSE(s.family.empty()) << s.op;
    EXPECT_TRUE(s.speed == KernelSpeed::Optimized || s.speed == KernelSpeed::Reference) << s.op;
  }
  const auto ops = supported_ops();
  EXPECT_EQ(marked.size(), ops.size());
  for (const auto& op : ops) EXPECT_EQ(marked.count(op), 1u) << op << " has no speed mark";
}

TEST(KernelSpeed, FollowsTheFamilyUnlessTheOpIsNoted) {
  int reference = 0;
  for (const auto& f : kernel_families())
    for (const auto& op : f.ops) {
      const OpSpeed s = kernel_speed(op);
      EXPECT_EQ(s.family, f.name);
      if (s.note.empty()) {  // an op apart from its family says why
        EXPECT_EQ(s.speed == KernelSpeed::Reference, f.reference_speed) << op;
      }
      reference += s.speed == KernelSpeed::Reference;
    }
  EXPECT_GT(reference, 0);  // the plain-loop families are marked
  EXPECT_EQ(kernel_speed("DFT").speed, KernelSpeed::Reference);
  const OpSpeed grid_sample = kernel_speed("GridSample");  // fast for its common modes only
  EXPECT_EQ(grid_sample.speed, KernelSpeed::Optimized);
  EXPECT_NE(grid_sample.note.find("bicubic"), std::string::npos);
  EXPECT_EQ(kernel_speed("Conv").speed, KernelSpeed::Optimized);
  const OpSpeed einsum = kernel_speed("Einsum");
  EXPECT_EQ(einsum.speed, KernelSpeed::Optimized);
  EXPECT_NE(einsum.note.find("sgemm"), std::string::npos);
  EXPECT_STREQ(kernel_speed_name(KernelSpeed::Reference), "reference");
  EXPECT_THROW(kernel_speed("NoSuchOp"), Error);
}

}  // namespace
}  // namespace fx
