// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/device_spec.h"

#include <cctype>

#include "util/error.h"

namespace fx::cuda {

DeviceSpec parse_device_spec(const std::string& text) {
  if (text == "cpu") return {};
  if (text == "cuda") return {true, 0};
  const std::string prefix = "cuda:";
  if (text.rfind(prefix, 0) == 0) {
    const std::string n = text.substr(prefix.size());
    bool digits = !n.empty() && n.size() <= 4;
    for (char c : n) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) return {true, std::stoi(n)};
  }
  throw Error("--device must be cpu, cuda or cuda:N (N a device ordinal), not '" + text + "'");
}

}  // namespace fx::cuda
