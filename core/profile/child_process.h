// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a command in a child process and reports how it ended, as a value: a kernel
// that crashes or hangs takes down the child, never the caller (the CLI's
// `fxc profile` and the GUI both profile this way).
//
//   ChildResult r = run_child({"/proc/self/exe", "profile", "m.onnx", "--json"},
//                             {.timeout_s = 60});
//   if (!r.ok()) throw Error("profiling " + r.describe());   // "crashed with SIGSEGV ..."
//
// The child runs in its own process group with stdin from /dev/null; stdout and
// stderr are captured. On timeout the whole group is killed (SIGKILL). It is started
// with posix_spawn, which is safe to call from a multi-threaded program.

#include <optional>
#include <string>
#include <vector>

namespace fx {

struct ChildOptions {
  std::optional<double> timeout_s;             // none: wait as long as it takes
  std::size_t max_output_bytes = 64ull << 20;  // per stream; the rest is discarded
  std::optional<std::string> working_dir;
};

struct ChildResult {
  enum class Status {
    Exited,         // ran to its end; see exit_code
    Signaled,       // killed by a signal it got (a crash: SIGSEGV, SIGABRT, ...)
    TimedOut,       // ran past the timeout; its process group was killed
    FailedToStart,  // could not be started (no such program, ...); see error
  };
  Status status = Status::FailedToStart;
  int exit_code = -1;  // when Exited
  int signal = 0;      // when Signaled
  std::string out;     // captured stdout
  std::string err;     // captured stderr
  bool out_truncated = false;
  bool err_truncated = false;
  std::string error;  // why it failed to start
  double wall_ms = 0;

  bool ok() const { return status == Status::Exited && exit_code == 0; }
  // One phrase: "exited with code 0", "crashed with SIGSEGV (segmentation fault)",
  // "timed out after 2 s and was killed", "could not start: No such file or directory".
  std::string describe() const;
  // The last non-empty line of stderr (the child's own error message), or "".
  std::string last_error_line() const;
};

ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options = {});

// "SIGSEGV (segmentation fault)" for a signal number.
std::string signal_description(int signal);

// For a child started by run_child that should not outlive its parent: asks the
// kernel to kill this process when the parent dies, and exits at once when the
// parent (`parent_pid`) is already gone. Linux only; a no-op elsewhere.
void die_with_parent(int parent_pid);

// The running program's own path (/proc/self/exe resolved), for re-executing itself.
std::string self_executable_path();

}  // namespace fx
