// SPDX-License-Identifier: Apache-2.0
#include "util/json_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/error.h"

namespace fx {

std::optional<nlohmann::json> try_parse_json(std::string_view text, std::string* error) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
}

nlohmann::json parse_json(std::string_view text, const std::string& origin) {
  std::string why;
  auto doc = try_parse_json(text, &why);
  if (!doc) throw FileError(origin, "not valid JSON: " + why);
  return std::move(*doc);
}

nlohmann::json read_json_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open " + std::string(what) + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw FileError(path, "cannot read " + std::string(what) + ": " + std::strerror(errno));
  return parse_json(text.str(), path);
}

}  // namespace fx
