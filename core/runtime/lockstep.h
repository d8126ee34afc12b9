// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rounds of work that depend on each other, each split in the same slices: a recurrent
// layer's time steps (each step reads the whole state the step before wrote, and a
// thread's slice of hidden units keeps its rows of the weights in its own cache).
//
//   run_lockstep(steps, 2, threads,
//                [&](int64_t round, int slice, int worker) { /* into worker's scratch */ },
//                [&](int64_t round, int slice, int worker) { /* scratch to the state */ });
//
// A slice is computed into the scratch of the worker that runs it (compute reads only
// what earlier rounds committed) and then committed (copied into the shared state).
// Every (round, slice) is committed exactly once, by a worker whose compute of it
// finished, and all of round r is committed before any compute of round r + 1 starts.
//
// No thread drives: whoever commits the last slice of a round opens the next, and each
// worker takes its own slice first, then any other nobody has claimed. So a thread the
// OS has taken away (a loaded machine: the caller as much as a pool worker) holds
// nothing back unless it was inside a slice; then the others wait for it only as long
// as a slice normally takes (measured as they go) and compute that slice again
// themselves; the late one's commit is refused. Waiting is left for the short copy of a
// commit, and for the end of the layer, when the caller waits until every helper has
// left the work (it reads the caller's buffers). Everything runs on the calling thread
// with threads <= 1 or slices <= 1.
//
// A compute that lost the race may still be reading state that later rounds overwrite:
// it must only read and write plain numbers (no pointers or sizes taken from the state),
// and its results are thrown away.

#include <cstdint>
#include <functional>

namespace fx {

using LockstepWork = std::function<void(int64_t round, int slice, int worker)>;

// Workers are numbered 0 .. min(slices, threads) - 1; each has its own scratch.
void run_lockstep(int64_t rounds, int slices, int threads, const LockstepWork& compute,
                  const LockstepWork& commit);

// How many slices were computed twice because their first worker was late, in this
// process (for tests and debug logs).
int64_t lockstep_recomputed_slices();

}  // namespace fx
