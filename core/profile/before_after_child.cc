// SPDX-License-Identifier: Apache-2.0
#include "profile/before_after_child.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <sstream>

#include "profile/child_process.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fx {
namespace {

constexpr const char* kBegin = "fxc-check-begin ";
constexpr const char* kEnd = "fxc-check-end ";

}  // namespace

std::string check_marker(const std::string& id, bool done) {
  return std::string(done ? kEnd : kBegin) + id;
}

std::string group_that_died(const std::string& err) {
  std::istringstream in(err);
  std::string open;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(kBegin, 0) == 0)
      open = line.substr(std::string(kBegin).size());
    else if (line.rfind(kEnd, 0) == 0 && line.substr(std::string(kEnd).size()) == open)
      open.clear();
  }
  return open;
}

std::map<std::string, std::string> excluded_groups(const std::vector<std::string>& args) {
  std::map<std::string, std::string> out;
  for (const auto& e : args) {
    auto eq = e.find('=');
    out[e.substr(0, eq)] = eq == std::string::npos ? "excluded by the caller" : e.substr(eq + 1);
  }
  return out;
}

nlohmann::json before_after_in_child(const BeforeAfterChildRequest& q) {
  std::map<std::string, std::string> excluded;
  const std::string what = "profiling " + q.model + " before/after: the profiling process ";
  for (int attempt = 0; attempt < q.max_attempts; ++attempt) {
    std::vector<std::string> argv = q.argv;
    argv.push_back("--parent-pid");
    argv.push_back(std::to_string(::getpid()));
    for (const auto& [id, why] : excluded) {
      argv.push_back("--exclude-group");
      argv.push_back(id + "=" + why);
    }
    ChildOptions co;
    co.timeout_s = q.timeout_s;
    ChildResult r = run_child(argv, co);
    if (r.ok()) {
      std::string why;
      if (auto doc = try_parse_json(r.out, &why)) return std::move(*doc);
      throw Error(what + "printed no valid JSON: " + why);
    }
    std::string culprit = group_that_died(r.err);
    if (!culprit.empty() && !excluded.count(culprit)) {
      std::string why = "its kernel " + r.describe() + " when run alone in the equivalence check";
      spdlog::warn("group {}: {}; profiling again without it", culprit, why);
      excluded[culprit] = why;
      continue;
    }
    std::string line = r.last_error_line();
    if (r.status == ChildResult::Status::Exited && line.rfind("fxc: ", 0) == 0)
      throw Error(line.substr(5));
    std::string hint =
        r.status == ChildResult::Status::TimedOut ? " (raise the limit with --timeout)" : "";
    throw Error(what + r.describe() + hint + (line.empty() ? "" : "; its last words: " + line));
  }
  throw Error(what + "kept failing: gave up after " + std::to_string(q.max_attempts) +
              " attempts, excluding one crashing group each time");
}

}  // namespace fx
