// SPDX-License-Identifier: Apache-2.0
#include "profile/kernel_flows.h"

#include <map>
#include <string>
#include <utility>

namespace fx {

std::vector<KernelFlow> kernel_flows(const Timeline& before, const Timeline& after) {
  // (run, node name) -> the fused after kernel covering it.
  std::map<std::pair<int, std::string>, std::size_t> fused_of;
  for (std::size_t i = 0; i < after.events.size(); ++i) {
    const KernelEvent& e = after.events[i];
    if (e.nodes.size() < 2) continue;
    for (const std::string& n : e.nodes) fused_of.try_emplace({e.run, n}, i);
  }
  std::vector<KernelFlow> flows;
  for (std::size_t i = 0; i < before.events.size(); ++i) {
    const KernelEvent& e = before.events[i];
    for (const std::string& n : e.nodes) {
      auto it = fused_of.find({e.run, n});
      if (it == fused_of.end()) continue;
      flows.push_back({i, it->second});
      break;
    }
  }
  return flows;
}

}  // namespace fx
