// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rounds of work that depend on each other, each split in the same slices: a recurrent
// layer's time steps (each step reads the whole state the step before wrote, and a
// thread's slice of hidden units keeps its rows of the weights in its own cache).
//
//   run_lockstep(steps, 2, threads, [&](int64_t round, int slice) { ... });
//
// Every (round, slice) runs exactly once, and all of round r finishes before any of
// round r + 1 starts. The calling thread drives: it publishes a round, does its own
// slice (slice 0) and every slice no helper has claimed, and waits only for slices a
// helper is running. Helpers (the runtime's pool workers) take their own slice first,
// then any other; one the OS has not scheduled leaves its slice to the caller, so a
// loaded machine costs a cache miss on those weights, not a time slice per round, as a
// barrier would. Everything runs on the calling thread with threads <= 1 or slices <= 1.

#include <cstdint>
#include <functional>

namespace fx {

void run_lockstep(int64_t rounds, int slices, int threads,
                  const std::function<void(int64_t round, int slice)>& work);

}  // namespace fx
