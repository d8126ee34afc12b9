// SPDX-License-Identifier: Apache-2.0
#include "runtime/memory_plan.h"

#include <algorithm>
#include <limits>

namespace fx {

namespace {

// The arena is the sum of the slot sizes, and the step-order best fit above depends on
// the order values appear: removing values (fusion) can make it grow. Greedy by size
// (TFLite's arena planner): the largest values first, each into the smallest slot
// whose values' lifetimes it does not overlap, so a slot never grows past its first
// value. The plan keeps whichever total is smaller. Values without a static size
// (shape arithmetic the canonical passes could not fold) count 0 in both totals and
// go last here; a few such values used to keep a whole model in step order, and then
// a fused program's fewer values could pack worse than the unfused ones.
template <class Estimate>
void by_size_if_smaller(MemoryPlan& plan, const std::vector<int>& def_step,
                        const std::vector<int>& last_use, const std::vector<ValueId>& unit, int n,
                        Estimate estimate) {
  struct Unit {
    int first = std::numeric_limits<int>::max(), last = -1;
    int64_t bytes = 0;
    std::vector<ValueId> values;
  };
  std::vector<Unit> units;
  std::vector<int> index(unit.size(), -1);
  int64_t total_a = 0;
  for (int64_t b : plan.slot_estimate) total_a += b;
  for (std::size_t v = 0; v < unit.size(); ++v) {
    if (plan.slot_of_value[v] < 0) continue;
    const auto id = static_cast<ValueId>(v);
    // A value without a static size counts 0 here: it goes last, into the smallest
    // slot free over its lifetime, and that slot grows to it at run time (as in the
    // step-order plan, where such a value also takes whatever slot is free).
    const int64_t b = std::max<int64_t>(estimate(id), 0);
    int& k = index[static_cast<std::size_t>(unit[v])];
    if (k < 0) {
      k = static_cast<int>(units.size());
      units.emplace_back();
    }
    Unit& u = units[static_cast<std::size_t>(k)];
    u.first = std::min(u.first, def_step[v]);
    u.last = std::max(u.last, std::min(last_use[v], n));
    u.bytes = std::max(u.bytes, b);
    u.values.push_back(id);
  }
  std::vector<int> order(units.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return units[static_cast<std::size_t>(a)].bytes > units[static_cast<std::size_t>(b)].bytes;
  });
  std::vector<int64_t> size;                           // per slot
  std::vector<std::vector<std::pair<int, int>>> busy;  // per slot: [first, last] of its units
  std::vector<int> slot_of_unit(units.size(), -1);
  int64_t total_b = 0;
  for (int k : order) {
    const Unit& u = units[static_cast<std::size_t>(k)];
    int best = -1;
    for (std::size_t s = 0; s < size.size(); ++s) {
      bool free = true;
      for (auto [f, l] : busy[s])
        if (u.first <= l && f <= u.last) {
          free = false;
          break;
        }
      if (free && (best < 0 || size[s] < size[static_cast<std::size_t>(best)]))
        best = static_cast<int>(s);
    }
    if (best < 0) {
      best = static_cast<int>(size.size());
      size.push_back(u.bytes);
      busy.emplace_back();
      total_b += u.bytes;
    }
    busy[static_cast<std::size_t>(best)].push_back({u.first, u.last});
    slot_of_unit[static_cast<std::size_t>(k)] = best;
  }
  if (total_b >= total_a) return;
  for (std::size_t k = 0; k < units.size(); ++k)
    for (ValueId v : units[k].values) plan.slot_of_value[v] = slot_of_unit[k];
  plan.slot_estimate = size;
}

}  // namespace

MemoryPlan MemoryPlan::build(const Graph& graph, const std::vector<PlanStep>& steps) {
  const std::size_t nv = graph.value_count();
  const int n = static_cast<int>(steps.size());
  MemoryPlan plan;
  plan.slot_of_value.assign(nv, -1);
  plan.alias_root.resize(nv);
  for (std::size_t v = 0; v < nv; ++v) plan.alias_root[v] = static_cast<ValueId>(v);

  std::vector<bool> produced(nv, false);
  std::vector<int> last_use(nv, -1);
  for (int s = 0; s < n; ++s) {
    for (ValueId o : steps[s].outputs) {
      if (o == kNoValue) continue;  // an optional output the model leaves out
      produced[o] = true;
      last_use[o] = std::max(last_use[o], s);  // a never-read output dies at once
      if (steps[s].aliases_input && !steps[s].inputs.empty() && steps[s].inputs[0] != kNoValue) {
        plan.alias_root[o] = plan.alias_root[steps[s].inputs[0]];
      }
    }
  }
  for (int s = 0; s < n; ++s) {
    for (ValueId i : steps[s].inputs) {
      if (i != kNoValue) last_use[i] = std::max(last_use[i], s);
    }
  }
  for (ValueId o : graph.outputs()) last_use[o] = n;  // copied out after the last step
  // A root lives as long as any of its views.
  for (std::size_t v = 0; v < nv; ++v) {
    ValueId r = plan.alias_root[v];
    if (r != static_cast<ValueId>(v)) last_use[r] = std::max(last_use[r], last_use[v]);
  }

  auto estimate = [&](ValueId v) -> int64_t {
    auto b = graph.value(v).byte_size();
    return b ? *b : 0;
  };
  std::vector<int> free_slots;
  std::vector<std::vector<ValueId>> dying(static_cast<std::size_t>(n) + 1);
  // For the by-size plan below: each slotted value's defining step, and the value whose
  // slot it took over (itself when none): values chained so share one slot in both plans.
  std::vector<int> def_step(nv, -1);
  std::vector<ValueId> unit(nv);
  for (std::size_t v = 0; v < nv; ++v) unit[v] = static_cast<ValueId>(v);
  std::vector<bool> has_views(nv, false);
  for (std::size_t v = 0; v < nv; ++v)
    if (plan.alias_root[v] != static_cast<ValueId>(v)) has_views[plan.alias_root[v]] = true;
  // The input of step s whose slot output 0 may take (input 0, or the one the kernel
  // names): an intermediate with a slot of its own (not a view, no views of it alive),
  // read by no later step and by no other input of this step.
  auto handover = [&](int s) -> ValueId {
    const PlanStep& st = steps[s];
    if (!st.over_input || st.aliases_input || st.inputs.empty() || st.outputs.empty())
      return kNoValue;
    const auto at = static_cast<std::size_t>(st.over_input_index);
    if (at >= st.inputs.size()) return kNoValue;
    const ValueId in = st.inputs[at];
    if (in == kNoValue || plan.slot_of_value[in] < 0 || last_use[in] != s) return kNoValue;
    if (plan.alias_root[in] != in) return kNoValue;
    for (std::size_t k = 0; k < st.inputs.size(); ++k) {
      const ValueId other = st.inputs[k];
      if (k == at) continue;
      if (other != kNoValue && plan.alias_root[other] == in) return kNoValue;
    }
    return has_views[static_cast<std::size_t>(in)] ? kNoValue : in;
  };
  for (int s = 0; s < n; ++s) {
    for (ValueId o : steps[s].outputs) {
      // Aliasing steps' outputs view other memory (their input, or a kernel's own
      // constant): no slot.
      if (o == kNoValue || steps[s].aliases_input || !produced[o]) continue;
      if (graph.value(o).is_constant()) continue;
      int64_t want = estimate(o);
      if (o == steps[s].outputs[0]) {
        if (ValueId in = handover(s); in != kNoValue) {
          auto& d = dying[static_cast<std::size_t>(s)];
          d.erase(std::remove(d.begin(), d.end(), in), d.end());
          const int slot = plan.slot_of_value[in];
          plan.slot_estimate[slot] = std::max(plan.slot_estimate[slot], want);
          plan.slot_of_value[o] = slot;
          def_step[o] = s;
          unit[o] = unit[in];
          dying[static_cast<std::size_t>(std::min(last_use[o], n))].push_back(o);
          continue;
        }
      }
      // Best fit: the smallest free slot that holds it, else the largest free one.
      int best = -1;
      for (std::size_t k = 0; k < free_slots.size(); ++k) {
        int c = free_slots[k];
        int64_t have = plan.slot_estimate[c];
        if (best < 0) {
          best = static_cast<int>(k);
          continue;
        }
        int64_t bh = plan.slot_estimate[free_slots[best]];
        bool fits = have >= want, bfits = bh >= want;
        if ((fits && (!bfits || have < bh)) || (!fits && !bfits && have > bh)) {
          best = static_cast<int>(k);
        }
      }
      int slot;
      if (best >= 0) {
        slot = free_slots[best];
        free_slots.erase(free_slots.begin() + best);
      } else {
        slot = plan.slot_count();
        plan.slot_estimate.push_back(0);
      }
      plan.slot_estimate[slot] = std::max(plan.slot_estimate[slot], want);
      plan.slot_of_value[o] = slot;
      def_step[o] = s;
      dying[static_cast<std::size_t>(std::min(last_use[o], n))].push_back(o);
    }
    for (ValueId v : dying[s]) free_slots.push_back(plan.slot_of_value[v]);
  }
  by_size_if_smaller(plan, def_step, last_use, unit, n, estimate);
  return plan;
}

}  // namespace fx
