// SPDX-License-Identifier: Apache-2.0
#include "runtime/recurrent_path.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>

#include "util/error.h"

namespace fx {
namespace {

// Runs of each path in the first call: the best of a few takes out a stray slow run
// (a page fault, a descheduled thread) without making the first run much longer.
constexpr int kRunsEach = 3;

std::mutex& choices_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, RecurrentChoice>& choices() {
  static std::map<std::string, RecurrentChoice> c;
  return c;
}

double time_us(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
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
  RecurrentChoice c{key, 0, 0, RecurrentPath::Plain, false};
  for (int i = 0; i < kRunsEach; ++i) {
    const double d = time_us(onednn), p = time_us(plain);
    c.onednn_us = i == 0 ? d : std::min(c.onednn_us, d);
    c.plain_us = i == 0 ? p : std::min(c.plain_us, p);
  }
  c.path = c.onednn_us < c.plain_us ? RecurrentPath::OneDnn : RecurrentPath::Plain;
  // The outputs are the chosen path's (the two agree to rounding).
  if (c.path == RecurrentPath::OneDnn) onednn();
  spdlog::debug("{}: oneDNN {:.1f} us, plain {:.1f} us: {} runs it", k, c.onednn_us, c.plain_us,
                recurrent_path_name(c.path));
  std::lock_guard<std::mutex> lock(choices_mutex());
  choices()[k] = c;
  return c.path;
}

std::vector<RecurrentChoice> recurrent_choices() {
  std::lock_guard<std::mutex> lock(choices_mutex());
  std::vector<RecurrentChoice> out;
  for (const auto& [k, c] : choices()) out.push_back(c);
  return out;
}

}  // namespace fx
