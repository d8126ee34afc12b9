// SPDX-License-Identifier: Apache-2.0
#pragma once
// The thread pool of the project's kernels (oneDNN keeps its own OpenMP team).
//
// Why not OpenMP for our kernels: an OpenMP parallel region ends in a barrier that
// waits for every team thread, so on a loaded machine a worker that the OS has not
// scheduled yet stalls the whole step for a time slice (milliseconds for a Relu
// of microseconds). Here the calling thread works too and chunks are claimed from
// a shared counter: a worker that wakes late finds nothing left and the caller has
// already moved on. The caller waits only for chunks a worker actually claimed; when
// that wait was long (the worker lost its core mid-chunk), later calls run inline
// for as long as the wait took, so an oversubscribed machine does not stall every
// kernel.

#include <cstdint>
#include <functional>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fx {

// Threads (caller included) that parallel_for on this thread may use; set by the
// executor for the duration of a run (see ScopedThreads). Default: 1.
int current_threads();

// Sets current_threads() for this thread until destroyed.
class ScopedThreads {
 public:
  explicit ScopedThreads(int threads);
  ~ScopedThreads();
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

// Calls chunk(c) for every c in [0, chunks), on the calling thread and up to
// threads - 1 pool workers. Runs everything inline when threads <= 1, when called
// from a pool worker (no nesting), or when another caller is using the pool.
void pool_run(int64_t chunks, int threads, const std::function<void(int64_t)>& chunk);

// oneDNN (OpenMP) on one thread for this scope, restored after: the pool is the
// parallelism. Pool workers are set so for good (runtime/thread_pool.cc); a scope is
// for the calling thread.
class OneOmpThread {
 public:
#ifdef _OPENMP
  OneOmpThread() : saved_(omp_get_max_threads()) {
    omp_set_num_threads(1);
  }
  ~OneOmpThread() {
    omp_set_num_threads(saved_);
  }
#endif
  OneOmpThread(const OneOmpThread&) = delete;
  OneOmpThread& operator=(const OneOmpThread&) = delete;

 private:
  [[maybe_unused]] int saved_ = 1;
};

}  // namespace fx
