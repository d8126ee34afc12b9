// SPDX-License-Identifier: Apache-2.0
#include "runtime/dead_steps.h"

#include <algorithm>
#include <set>

namespace fx {

int remove_dead_steps(const Graph& g, std::vector<Step>& steps) {
  const std::set<ValueId> outputs(g.outputs().begin(), g.outputs().end());
  int removed = 0;
  for (bool changed = true; changed;) {
    std::set<ValueId> read;
    for (const Step& s : steps) read.insert(s.inputs.begin(), s.inputs.end());
    auto dead = [&](const Step& s) {
      return !s.outputs.empty() && std::none_of(s.outputs.begin(), s.outputs.end(), [&](ValueId v) {
        return read.count(v) || outputs.count(v);
      });
    };
    const auto before = steps.size();
    steps.erase(std::remove_if(steps.begin(), steps.end(), dead), steps.end());
    changed = steps.size() != before;
    removed += static_cast<int>(before - steps.size());
  }
  return removed;
}

}  // namespace fx
