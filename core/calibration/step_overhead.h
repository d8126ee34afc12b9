// SPDX-License-Identifier: Apache-2.0
#pragma once
// The runtime's cost of one step (a kernel call) that does almost nothing: what the cost
// model's launch_overhead_s stands for on a CPU. Measured by running chains of small
// elementwise kernels (Add, Relu, Mul on 64 floats) through the executor at two lengths: the
// difference of their times over the difference of their lengths is one step's cost (the run's own
// fixed cost cancels). A thread hand-off round trip (a condition variable and a worker) is not that
// figure: the executor runs its steps on the calling thread, and on a shared machine the hand-off
// waits for the scheduler (10-20 us), where a step costs well under a microsecond.

#include <cstdint>

namespace fx {

// Seconds per step on `threads` intra-op threads (0: all hardware threads, as the
// executor), the median of repeated pairs of runs within about budget_s; NaN when the
// measurement fails (the runtime cannot build the chain).
double measure_step_overhead(int threads, double budget_s);

// Bytes per second (read + written) the runtime's elementwise kernels stream on tensors
// of bytes_touched / 8 floats each (a step reads and writes one), beyond `step_s` per
// step: the same chains at that size. Where the copy curve says what memcpy reaches in
// each cache, this is what the runtime's own loops reach (a fraction of it); NaN when
// the measurement fails.
double measure_elementwise_rate(int threads, int64_t bytes_touched, double step_s, double budget_s);
// The same for relayouts ([1, 64, HW] <-> [1, HW, 64] transposes): the data-movement
// class's rate, at which the cost model times an unfused conv's layout conversions.
double measure_relayout_rate(int threads, int64_t bytes_touched, double step_s, double budget_s);

}  // namespace fx
