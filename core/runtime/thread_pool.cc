// SPDX-License-Identifier: Apache-2.0
#include "runtime/thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fx {
namespace {

thread_local int tl_threads = 1;
thread_local bool tl_is_worker = false;

// One parallel_for: chunks are claimed through `next`; `done` counts finished ones.
struct Job {
  const std::function<void(int64_t)>* chunk = nullptr;
  int64_t chunks = 0;
  int max_helpers = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> helpers{0};
};

class Pool {
 public:
  static Pool& get() {
    static Pool* p = new Pool;  // never destroyed: workers may outlive static teardown
    return *p;
  }

  void run(int64_t chunks, int threads, const std::function<void(int64_t)>& f) {
    std::unique_lock busy(busy_, std::try_to_lock);
    const int64_t now = now_ns();
    if (!busy.owns_lock() || now < inline_until_ns_.load(std::memory_order_relaxed)) {
      for (int64_t c = 0; c < chunks; ++c) f(c);
      return;
    }
    ensure_workers(threads - 1);
    auto job = std::make_shared<Job>();
    job->chunk = &f;
    job->chunks = chunks;
    job->max_helpers = threads - 1;
    {
      std::lock_guard lk(m_);
      job_ = job;
      ++generation_;
    }
    cv_.notify_all();
    work(*job);
    // Only chunks a running worker claimed remain; they finish within their own time,
    // unless the OS took that worker's core (an oversubscribed machine): then the
    // wait is a time slice. After such a wait, run inline for as long again.
    const int64_t wait_from = now_ns();
    while (job->done.load(std::memory_order_acquire) < chunks) std::this_thread::yield();
    const int64_t waited = now_ns() - wait_from;
    if (waited > kStallNs) inline_until_ns_.store(now_ns() + waited, std::memory_order_relaxed);
    std::lock_guard lk(m_);
    job_.reset();
  }

 private:
  static void work(Job& j) {
    int64_t c;
    while ((c = j.next.fetch_add(1, std::memory_order_relaxed)) < j.chunks) {
      (*j.chunk)(c);
      j.done.fetch_add(1, std::memory_order_release);
    }
  }

  void ensure_workers(int n) {
    while (static_cast<int>(workers_.size()) < n) {
      workers_.emplace_back([this] { worker_loop(); });
      workers_.back().detach();
    }
  }

  void worker_loop() {
    tl_is_worker = true;
#ifdef _OPENMP
    omp_set_num_threads(1);  // oneDNN called from a worker runs on that worker alone
#endif
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        // Spin briefly before sleeping: kernels come back to back within a run.
        auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
        while (generation_.load(std::memory_order_acquire) == seen &&
               std::chrono::steady_clock::now() < until) {
          std::this_thread::yield();
        }
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        job = job_;
      }
      if (!job) continue;
      if (job->helpers.fetch_add(1) >= job->max_helpers) continue;
      work(*job);
    }
  }

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static constexpr int64_t kStallNs = 500'000;  // far beyond any chunk's skew when idle

  std::mutex busy_;  // one caller at a time
  std::atomic<int64_t> inline_until_ns_{0};
  std::mutex m_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::shared_ptr<Job> job_;
  std::vector<std::thread> workers_;
};

}  // namespace

int current_threads() {
  return tl_threads;
}

ScopedThreads::ScopedThreads(int threads) : saved_(tl_threads) {
  tl_threads = threads > 0 ? threads : 1;
}
ScopedThreads::~ScopedThreads() {
  tl_threads = saved_;
}

void pool_run(int64_t chunks, int threads, const std::function<void(int64_t)>& chunk) {
  if (chunks <= 0) return;
  if (threads <= 1 || chunks == 1 || tl_is_worker) {
    for (int64_t c = 0; c < chunks; ++c) chunk(c);
    return;
  }
  Pool::get().run(chunks, threads, chunk);
}

}  // namespace fx
