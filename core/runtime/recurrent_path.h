// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which implementation runs a recurrent layer that both can run: oneDNN's RNN primitive
// (runtime/recurrent_dnnl.h) or the runtime's own kernel, whose hidden units are split
// over threads in lockstep (runtime/lockstep.h). Neither wins everywhere: oneDNN's team
// meets at an OpenMP barrier inside every step, which is cheap on a quiet machine with
// active waiting and dear under OMP_WAIT_POLICY=passive or load, and its cells are
// tuned for wide layers. So the choice is measured on the machine, once per process
// for each layer shape and thread count: the first run of such a layer runs both paths
// a few times, alternately, keeps the faster (best of each) and says so at debug level.
//
//   RecurrentKey key{"LSTM", 1, 256, 64, 100, 1, 2, ""};
//   run_measured(key, [&] { dnnl_path(); }, [&] { plain_path(); });
//
// FX_RECURRENT_PATH=onednn or =plain forces one path for every layer both can run (for
// tests and A/B measurements); unset or "measure", the measurement decides. A timed run
// during which the OS took the calling thread off its core is not one of the few: the
// path runs again (a bounded number of times), so that load during the check does not
// pick the slower path for the whole process.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fx {

enum class RecurrentPath { Plain, OneDnn };
const char* recurrent_path_name(RecurrentPath p);

// A layer's shape as the choice depends on it.
struct RecurrentKey {
  std::string cell;  // "LSTM", "GRU"
  int64_t dirs = 1, hidden = 0, input = 0, seq = 0, batch = 0;
  int threads = 1;
  std::string variant;  // what else changes the work: "peepholes", "linear_before_reset"
  std::string str() const;
};

struct RecurrentChoice {
  RecurrentKey key;
  double onednn_us = 0, plain_us = 0;  // best of the measured runs; 0 when forced
  RecurrentPath path = RecurrentPath::Plain;
  bool forced = false;
  int onednn_runs = 0, plain_runs = 0;  // runs measured (more when some were disturbed)
};

// The path FX_RECURRENT_PATH forces, if any; Error on another value.
std::optional<RecurrentPath> forced_recurrent_path();

// Runs the layer by the path chosen for `key` (measuring both on the first call for the
// key in this process): onednn() or plain() each compute the whole layer's outputs.
RecurrentPath run_measured(const RecurrentKey& key, const std::function<void()>& onednn,
                           const std::function<void()>& plain);

// Involuntary context switches of the calling thread so far (the OS took its core away,
// or it yielded while waiting for another thread); 0 where the OS does not say. A
// measured run during which this grew was disturbed and is run again.
int64_t involuntary_switches();

// The choices made so far in this process (for tests and `fxc profile`'s notes).
std::vector<RecurrentChoice> recurrent_choices();

}  // namespace fx
