// SPDX-License-Identifier: Apache-2.0
#include "device/winograd_support.h"

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace fx {

std::optional<bool> WinogradSupport::answer(const WinogradShape& s) const {
  for (const auto& a : shapes)
    if (a.shape == s) return a.runs;
  return std::nullopt;
}

bool WinogradSupport::runs(const WinogradShape& s) const {
  return answer(s).value_or(false);
}

nlohmann::json to_json(const WinogradSupport& w) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& a : w.shapes) {
    const WinogradShape& s = a.shape;
    shapes.push_back({s.ic, s.oc, s.ih, s.iw, s.oh, s.ow, s.pad_top, s.pad_left, s.pad_bottom,
                      s.pad_right, a.runs ? 1 : 0});
  }
  return {{"threads", w.threads}, {"shapes", shapes}};
}

WinogradSupport winograd_support_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("device profile: \"winograd\" is not an object");
  WinogradSupport w;
  try {
    w.threads = j.value("threads", 0);
    for (const auto& row : j.value("shapes", nlohmann::json::array())) {
      if (!row.is_array() || row.size() != 11)
        throw Error("device profile: a \"winograd\" shape is not 11 numbers");
      std::vector<int64_t> v = row.get<std::vector<int64_t>>();
      w.shapes.push_back(
          {{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]}, v[10] != 0});
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("device profile: \"winograd\": ") + e.what());
  }
  return w;
}

}  // namespace fx
