// SPDX-License-Identifier: Apache-2.0
#pragma once
// Wall-clock timing in milliseconds for figures the tool reports (load time, ...).

#include <chrono>

namespace fx {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  void restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace fx
