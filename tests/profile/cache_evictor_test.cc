// SPDX-License-Identifier: Apache-2.0
#include "profile/cache_evictor.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

TEST(CacheEvictor, RoundsTheBufferUpToWholeLines) {
  EXPECT_EQ(CacheEvictor(1).bytes(), 64u);
  EXPECT_EQ(CacheEvictor(64).bytes(), 64u);
  EXPECT_EQ(CacheEvictor(65).bytes(), 128u);
  EXPECT_EQ(CacheEvictor(64u << 20).bytes(), 64u << 20);
}

TEST(CacheEvictor, EveryWalkReadsAndWritesEachLineOnce) {
  CacheEvictor e(1000);  // 16 lines
  EXPECT_EQ(e.checksum(), 0u);
  e.evict();
  EXPECT_EQ(e.lines_touched(), 16u);
  EXPECT_EQ(e.checksum(), 16u);
  e.evict();
  EXPECT_EQ(e.lines_touched(), 32u);
  EXPECT_EQ(e.checksum(), 32u);  // read back and incremented, not overwritten
}

}  // namespace
}  // namespace fx
