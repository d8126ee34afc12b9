// SPDX-License-Identifier: Apache-2.0
#include "calibration/step_overhead.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "ir/graph_builder.h"
#include "runtime/executor.h"
#include "util/statistics.h"

namespace fx {
namespace {

using Clock = std::chrono::steady_clock;

// The kernels a small model's groups are made of, on `elements` floats: a broadcast
// Add, Relu, a broadcast Mul, in turn (the grid's dispatch point, calibration_grid.h).
// Each step pays what every kernel call pays (its operands' shapes and strides, the
// output slot, the dispatch to the op's loop) and reads and writes `elements` floats.
Graph small_chain(int length, int64_t elements) {
  GraphBuilder b;
  ValueId y = b.input("x", {1, elements});
  const ValueId half = b.constant("half", TensorData::from_floats({1}, {0.5f}));
  for (int i = 0; i < length; ++i) {
    const std::string name = "op_" + std::to_string(i);
    if (i % 3 == 0) y = b.op("Add", {y, half}, {}, name);
    if (i % 3 == 1) y = b.op("Relu", {y}, {}, name);
    if (i % 3 == 2) y = b.op("Mul", {y, half}, {}, name);
  }
  b.output(y);
  return b.build();
}

// Relayouts on `elements` floats: [1, 64, HW] to [1, HW, 64] and back, in turn (what the
// runtime's unfused spatial conv does to its activations on every call, and the grid's
// relayout point).
Graph transpose_chain(int length, int64_t elements) {
  const int64_t ch = 64, hw = std::max<int64_t>(1, elements / ch);
  GraphBuilder b;
  ValueId y = b.input("x", {1, ch * hw});
  y = b.op("Reshape", {y, b.constant("shape", TensorData::from_int64s({3}, {1, ch, hw}))}, {},
           "to_planes", Shape::of({1, ch, hw}));
  for (int i = 0; i < length; ++i)
    y = b.op("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, "t_" + std::to_string(i),
             i % 2 ? Shape::of({1, ch, hw}) : Shape::of({1, hw, ch}));
  b.output(y);
  return b.build();
}

// Seconds per step of the chain on `elements` floats: the difference of two lengths'
// run times over the difference of their lengths (the run's own fixed cost cancels),
// the median of pairs run back to back (a burst of load hits both).
double seconds_per_step(int threads, int64_t elements, double budget_s,
                        Graph (*chain)(int, int64_t) = small_chain) {
  constexpr int kShort = 6, kLong = 66;
  const Graph short_chain = chain(kShort, elements), long_chain = chain(kLong, elements);
  Executor a(short_chain, ExecutorOptions{.threads = threads});
  Executor b(long_chain, ExecutorOptions{.threads = threads});
  const std::map<std::string, Tensor> in = {
      {"x", Tensor::from_floats({1, elements},
                                std::vector<float>(static_cast<std::size_t>(elements), 0.5f))}};
  // (transpose_chain rounds `elements` to whole planes: its input is that many.)
  auto time = [&](Executor& e) {
    const auto t0 = Clock::now();
    e.run(in);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (int i = 0; i < 3; ++i) time(a), time(b);  // warm: arenas, kernels, caches
  std::vector<double> per_step;
  const auto start = Clock::now();
  while (per_step.size() < 15 ||
         (per_step.size() < 2000 &&
          std::chrono::duration<double>(Clock::now() - start).count() < budget_s))
    per_step.push_back((time(b) - time(a)) / (kLong - kShort));
  const double s = median_or_nan(per_step);
  return s > 0 ? s : NAN;
}

}  // namespace

double measure_step_overhead(int threads, double budget_s) {
  try {
    return seconds_per_step(threads, 64, budget_s);
  } catch (const std::exception& e) {
    spdlog::warn("calibration: the per-step cost could not be measured: {}", e.what());
    return NAN;
  }
}

double measure_elementwise_rate(int threads, int64_t bytes_touched, double step_s,
                                double budget_s) {
  const int64_t elements = std::max<int64_t>(1024, bytes_touched / 8);
  try {
    const double s =
        seconds_per_step(threads, elements, budget_s) - (std::isfinite(step_s) ? step_s : 0.0);
    return s > 0 ? 8.0 * double(elements) / s : NAN;
  } catch (const std::exception& e) {
    spdlog::warn("calibration: the elementwise rate could not be measured: {}", e.what());
    return NAN;
  }
}

double measure_relayout_rate(int threads, int64_t bytes_touched, double step_s, double budget_s) {
  const int64_t elements = std::max<int64_t>(64 * 16, bytes_touched / 8) / 64 * 64;
  try {
    const double s = seconds_per_step(threads, elements, budget_s, transpose_chain) -
                     (std::isfinite(step_s) ? step_s : 0.0);
    return s > 0 ? 8.0 * double(elements) / s : NAN;
  } catch (const std::exception& e) {
    spdlog::warn("calibration: the relayout rate could not be measured: {}", e.what());
    return NAN;
  }
}

}  // namespace fx
