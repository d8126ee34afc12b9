// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc codegen --bandwidth`: generated memory-bound kernels (an elementwise chain,
// LayerNormalization, Softmax) against a generated stream copy on tensors of a given
// size, no model needed. Each kernel runs alone in its own graph and executor; the
// kernels take turns run by run, so that each is timed in the same state as the copy
// of its round (bandwidth_summary.h gives the verdict).
//
//   BandwidthBench b = run_bandwidth_bench({.mib = 256, .runs = 20});
//   b.rows[1].ratio_median   // the chain's GB/s against the copy's, same rounds
//
// The kernels' ids: stream-copy, chain (on x [n]), layernorm, softmax (on m [rows, 1024]).

#include <cstdint>
#include <string>
#include <vector>

#include "profile/bandwidth_summary.h"

namespace fx {

struct BandwidthBenchOptions {
  double mib = 0;   // size of each tensor
  int threads = 0;  // 0: all hardware threads
  int runs = 5;     // per repetition (at least 5)
  int reps = 5;     // repetitions (at least 1)
};

// The tensors' sizes for `mib`.
struct BandwidthShapes {
  int64_t n = 0;  // floats of x
  int64_t rows = 0, cols = 1024;
};
BandwidthShapes bandwidth_shapes(double mib);

struct BandwidthBench {
  BandwidthShapes shapes;
  int threads = 0;  // what the executors used
  int runs = 0, reps = 0;
  double target = 0.80;            // ratio_median a kernel needs against the copy
  std::vector<BandwidthRow> rows;  // stream-copy first, then chain, layernorm, softmax
};

// Throws fx::Error when a kernel is not generated and compiled (no compiler).
BandwidthBench run_bandwidth_bench(const BandwidthBenchOptions& options);

// The four kernels as one CUDA translation unit (for bench/gpu/bandwidth.cu: entry
// points fx_stream_copy_cuda, fx_chain_cuda(x), fx_layernorm_cuda(m, scale, bias),
// fx_softmax_cuda(m)). Throws fx::Error when emission fails.
std::string bandwidth_cuda_source(double mib);

}  // namespace fx
