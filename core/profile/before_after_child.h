// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the before/after profile in a child process (`fxc profile ... --json
// --in-process`), so that a generated kernel that crashes or hangs ends the child, not
// the caller. The child announces each group's equivalence check on stderr
// (check_marker); when it dies inside one, that group is excluded, with how it died as
// the reason, and the child is started again without it.
//
//   BeforeAfterChildRequest q{.argv = {fxc, "profile", "m.onnx", "--opt-level", "2",
//                                      "--json", "--in-process"}, .model = "m.onnx"};
//   nlohmann::json doc = before_after_in_child(q);   // docs/before_after.md

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fx {

// "fxc-check-begin ID" / "fxc-check-end ID": one line on stderr each.
std::string check_marker(const std::string& group_id, bool done);

// The group whose check began and never ended in a child's stderr, or "".
std::string group_that_died(const std::string& child_stderr);

// The child's side of the exclusions: its --exclude-group values, "ID=why" (or "ID"),
// as id -> why.
std::map<std::string, std::string> excluded_groups(const std::vector<std::string>& args);

struct BeforeAfterChildRequest {
  std::vector<std::string> argv;  // the child's command line, without --exclude-group
  std::string model;              // for messages
  double timeout_s = 600;         // per attempt
  int max_attempts = 32;
};

// The child's JSON document. Excluded-after-crash groups are in it with status
// "excluded" and the reason. Throws fx::Error when the child fails in a way no group
// explains (its own error line when it printed one).
nlohmann::json before_after_in_child(const BeforeAfterChildRequest& request);

}  // namespace fx
