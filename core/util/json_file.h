// SPDX-License-Identifier: Apache-2.0
#pragma once
// Loading a JSON document, with the failure said the same way everywhere: the file (or
// whatever `origin` names) and the cause, as fx::FileError.
//
//   nlohmann::json doc = read_json_file(path, "fusion plan");
//   // FileError "plan.json: cannot open fusion plan: No such file or directory"
//   // FileError "plan.json: not valid JSON: [json.exception.parse_error.101] ..."
//
// Checking what the document holds is the caller's job; this only gets it parsed.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace fx {

// The document in `text`, or nullopt with the parser's message in `error` (for callers
// that phrase the failure themselves, e.g. a child process that printed no JSON).
std::optional<nlohmann::json> try_parse_json(std::string_view text, std::string* error = nullptr);

// The document in `text`; throws FileError(origin, "not valid JSON: <parser's message>").
nlohmann::json parse_json(std::string_view text, const std::string& origin);

// The document in the file at `path`; throws FileError(path, "cannot open <what>: <cause>")
// when it cannot be read, and as parse_json when it is not JSON.
nlohmann::json read_json_file(const std::string& path, std::string_view what = "file");

// read_json_file, then `convert(doc)`; whatever the conversion throws comes back as a
// FileError naming `path` (a JSON type error as "not valid JSON: ...").
template <class Convert>
auto load_json_file(const std::string& path, std::string_view what, Convert convert) {
  const nlohmann::json doc = read_json_file(path, what);
  try {
    return convert(doc);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(path, std::string("not valid JSON: ") + e.what());
  } catch (const FileError&) {
    throw;
  } catch (const Error& e) {
    throw FileError(path, e.what());
  }
}

}  // namespace fx
