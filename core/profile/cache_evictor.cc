// SPDX-License-Identifier: Apache-2.0
#include "profile/cache_evictor.h"

#include <numeric>

namespace fx {

namespace {
constexpr std::size_t kLine = 64;
constexpr std::size_t kWordsPerLine = kLine / sizeof(std::uint32_t);
}  // namespace

CacheEvictor::CacheEvictor(std::size_t bytes)
    : words_((bytes + kLine - 1) / kLine * kWordsPerLine, 0u) {}

void CacheEvictor::evict() {
  // volatile: the compiler may not fold the walk away or turn it into streaming stores.
  volatile std::uint32_t* w = words_.data();
  const std::size_t n = words_.size();
  for (std::size_t i = 0; i < n; i += kWordsPerLine) w[i] = w[i] + 1u;
  touched_ += n / kWordsPerLine;
}

std::uint64_t CacheEvictor::checksum() const {
  return std::accumulate(words_.begin(), words_.end(), std::uint64_t{0});
}

}  // namespace fx
