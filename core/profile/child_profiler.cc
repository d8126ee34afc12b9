// SPDX-License-Identifier: Apache-2.0
#include "profile/child_profiler.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "profile/child_process.h"
#include "profile/profile_json.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fx {

std::vector<std::string> child_profile_command(const ChildProfileRequest& q) {
  const ProfileOptions& o = q.options;
  std::vector<std::string> argv = {q.fxc_path,
                                   "profile",
                                   q.model,
                                   "--json",
                                   "--in-process",
                                   "--runs",
                                   std::to_string(o.runs),
                                   "--warmup",
                                   std::to_string(o.warmup),
                                   "--threads",
                                   std::to_string(o.threads),
                                   "--seed",
                                   std::to_string(o.seed)};
  // So that the child ends with us (Ctrl-C, a killed GUI) instead of running on.
  argv.push_back("--parent-pid");
  argv.push_back(std::to_string(::getpid()));
  for (const auto& [name, value] : q.dims) {
    argv.push_back("--dim");
    argv.push_back(name + "=" + std::to_string(value));
  }
  argv.insert(argv.end(), q.extra_args.begin(), q.extra_args.end());
  return argv;
}

ProfileResult profile_in_child(const ChildProfileRequest& q) {
  ChildOptions co;
  co.timeout_s = q.timeout_s;
  const auto argv = child_profile_command(q);
  spdlog::debug("profiling in a child process: {} ...", argv[0]);
  ChildResult r = run_child(argv, co);
  const std::string what = "profiling " + q.model + ": the profiling process ";
  if (r.status == ChildResult::Status::Exited && r.exit_code != 0) {
    // The child's own "fxc: <message>" says what went wrong with the model.
    std::string line = r.last_error_line();
    if (line.rfind("fxc: ", 0) == 0) throw Error(line.substr(5));
    throw Error(what + r.describe() + (line.empty() ? "" : ": " + line));
  }
  if (!r.ok()) {
    std::string line = r.last_error_line();
    std::string hint =
        r.status == ChildResult::Status::TimedOut ? " (raise the limit with --timeout)" : "";
    throw Error(what + r.describe() + hint + (line.empty() ? "" : "; its last words: " + line));
  }
  std::string why;
  auto doc = try_parse_json(r.out, &why);
  if (!doc) throw Error(what + "printed no valid JSON: " + why);
  return profile_result_from_json(*doc, "output of '" + argv[0] + " profile'");
}

}  // namespace fx
