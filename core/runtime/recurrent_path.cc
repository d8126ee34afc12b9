// SPDX-License-Identifier: Apache-2.0
#include "runtime/recurrent_path.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>

#include <sys/resource.h>

#include "util/error.h"

namespace fx {
namespace {

// Runs of each path in the first call: the best of a few takes out a stray slow run
// (a page fault) without making the first run much longer. A run during which the OS
// took the calling thread off its core (a loaded machine: a time slice is several times
// a layer's work) does not count towards these; that path runs again, up to
// kMaxRunsEach times, so that a burst of load during the check does not hand the layer
// to the slower path for the life of the process.
constexpr int kRunsEach = 3;
constexpr int kMaxRunsEach = 12;

std::mutex& choices_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, RecurrentChoice>& choices() {
  static std::map<std::string, RecurrentChoice> c;
  return c;
}

struct Timed {
  double us = 0;
  bool disturbed = false;
};

Timed time_us(const std::function<void()>& f) {
  const int64_t switches = involuntary_switches();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return {us, involuntary_switches() != switches};
}

}  // namespace

const char* recurrent_path_name(RecurrentPath p) {
  return p == RecurrentPath::OneDnn ? "onednn" : "plain";
}

std::string RecurrentKey::str() const {
  return cell + " dirs=" + std::to_string(dirs) + " hidden=" + std::to_string(hidden) +
         " input=" + std::to_string(input) + " seq=" + std::to_string(seq) +
         " batch=" + std::to_string(batch) + " threads=" + std::to_string(threads) +
         (variant.empty() ? "" : " " + variant);
}

std::optional<RecurrentPath> forced_recurrent_path() {
  const char* v = std::getenv("FX_RECURRENT_PATH");
  if (!v || !*v || std::string(v) == "measure") return std::nullopt;
  if (std::string(v) == "onednn") return RecurrentPath::OneDnn;
  if (std::string(v) == "plain") return RecurrentPath::Plain;
  throw Error(std::string("FX_RECURRENT_PATH must be onednn, plain or measure, got '") + v + "'");
}

RecurrentPath run_measured(const RecurrentKey& key, const std::function<void()>& onednn,
                           const std::function<void()>& plain) {
  const std::string k = key.str();
  if (auto forced = forced_recurrent_path()) {
    {
      std::lock_guard<std::mutex> lock(choices_mutex());
      choices()[k] = RecurrentChoice{key, 0, 0, *forced, true};
    }
    (*forced == RecurrentPath::OneDnn ? onednn : plain)();
    return *forced;
  }
  {
    std::lock_guard<std::mutex> lock(choices_mutex());
    auto it = choices().find(k);
    if (it != choices().end() && !it->second.forced) {
      const RecurrentPath p = it->second.path;
      (p == RecurrentPath::OneDnn ? onednn : plain)();
      return p;
    }
  }
  // Alternate, so that a change of the machine's load during the check falls on both.
  // Each path keeps its best run; a disturbed run is no worse than the path, only
  // perhaps much slower, so it counts for the best but not for the runs wanted.
  RecurrentChoice c{key, 0, 0, RecurrentPath::Plain, false};
  auto one = [](const std::function<void()>& f, double& best, int& runs, int& clean) {
    const Timed t = time_us(f);
    best = runs++ == 0 ? t.us : std::min(best, t.us);
    clean += t.disturbed ? 0 : 1;
  };
  int clean_d = 0, clean_p = 0;
  RecurrentPath last = RecurrentPath::Plain;
  while ((clean_d < kRunsEach && c.onednn_runs < kMaxRunsEach) ||
         (clean_p < kRunsEach && c.plain_runs < kMaxRunsEach)) {
    if (clean_d < kRunsEach && c.onednn_runs < kMaxRunsEach) {
      one(onednn, c.onednn_us, c.onednn_runs, clean_d);
      last = RecurrentPath::OneDnn;
    }
    if (clean_p < kRunsEach && c.plain_runs < kMaxRunsEach) {
      one(plain, c.plain_us, c.plain_runs, clean_p);
      last = RecurrentPath::Plain;
    }
  }
  c.path = c.onednn_us < c.plain_us ? RecurrentPath::OneDnn : RecurrentPath::Plain;
  // The outputs are the chosen path's, as on every later call (the two paths agree only
  // to rounding): the last run may have been the other path's, when one path needed
  // more runs than the other to be timed undisturbed.
  if (last != c.path) (c.path == RecurrentPath::OneDnn ? onednn : plain)();
  spdlog::debug(
      "{}: oneDNN {:.1f} us ({} runs, {} undisturbed), plain {:.1f} us ({} runs, {} "
      "undisturbed): {} runs it",
      k, c.onednn_us, c.onednn_runs, clean_d, c.plain_us, c.plain_runs, clean_p,
      recurrent_path_name(c.path));
  std::lock_guard<std::mutex> lock(choices_mutex());
  choices()[k] = c;
  return c.path;
}

int64_t involuntary_switches() {
#ifdef RUSAGE_THREAD
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) == 0) return u.ru_nivcsw;
#endif
  return 0;  // unknown here: no run counts as disturbed
}

std::vector<RecurrentChoice> recurrent_choices() {
  std::lock_guard<std::mutex> lock(choices_mutex());
  std::vector<RecurrentChoice> out;
  for (const auto& [k, c] : choices()) out.push_back(c);
  return out;
}

}  // namespace fx
