// SPDX-License-Identifier: Apache-2.0
// CacheEvictor: pushes a model's weights and activations out of the caches between
// timed runs, so that a "cold" figure means the same for our runtime and for ONNX
// Runtime (bench/peer/ort_run.js --cold-runs does the same walk over a buffer of the
// same size).
//
// Why a read-modify-write of every cache line: a plain memset of a large buffer may
// use non-temporal stores, which bypass the caches and leave the weights where they
// were; an increment has to bring each line in, and the buffer is larger than the
// last-level cache, so what was there before is gone when the walk ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fx {

class CacheEvictor {
 public:
  // bytes: the buffer walked by evict(), rounded up to whole 64-byte lines; choose it
  // larger than the last-level cache (bench: 64 MiB against a 32 MiB L3).
  explicit CacheEvictor(std::size_t bytes);

  // Reads and writes one word of every cache line of the buffer, in order.
  void evict();

  std::size_t bytes() const { return words_.size() * sizeof(std::uint32_t); }
  // Lines touched by the walks so far (what the tests check).
  std::uint64_t lines_touched() const { return touched_; }
  // Sum over the buffer of the walked words: evict() adds one per line.
  std::uint64_t checksum() const;

 private:
  std::vector<std::uint32_t> words_;
  std::uint64_t touched_ = 0;
};

}  // namespace fx
