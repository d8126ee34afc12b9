// SPDX-License-Identifier: Apache-2.0
#pragma once
// Profiles a model in a child process, so that a crashing or hanging kernel ends the
// child and comes back here as an fx::Error ("... crashed with SIGSEGV ..."). The
// child is `fxc profile MODEL --json --in-process ...`: the CLI passes its own path
// (self_executable_path()), the GUI the fxc next to it.
//
//   ChildProfileRequest req{.fxc_path = "/usr/bin/fxc", .model = "m.onnx"};
//   req.options.runs = 20;
//   ProfileResult r = profile_in_child(req);   // no tensors; timeline = representative run

#include <map>
#include <string>
#include <vector>

#include "profile/profiler.h"

namespace fx {

struct ChildProfileRequest {
  std::string fxc_path;
  std::string model;
  std::map<std::string, int64_t> dims;  // symbolic dim bindings
  ProfileOptions options;
  double timeout_s = 600;
  std::vector<std::string> extra_args;  // further `fxc profile` flags, passed as they are
};

// The child's command line.
std::vector<std::string> child_profile_command(const ChildProfileRequest& request);

// Runs it and parses its JSON. Throws fx::Error naming the model and saying how the
// child ended (its own last error line when it reported one).
ProfileResult profile_in_child(const ChildProfileRequest& request);

}  // namespace fx
