// SPDX-License-Identifier: Apache-2.0
#include "runtime/memory_plan.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

namespace fx {

namespace {

// Values that share one slot in every plan (a chain of outputs written over their
// inputs): one lifetime, the largest size.
struct Unit {
  int first = std::numeric_limits<int>::max(), last = -1;
  int64_t bytes = 0;
  std::vector<ValueId> values;
};

// A packing of units into slots: the slot of each unit, and each slot's size.
struct Packing {
  std::vector<int> slot_of_unit;
  std::vector<int64_t> size;

  int64_t total() const {
    int64_t t = 0;
    for (int64_t b : size) t += b;
    return t;
  }
};

// How a packing picks among the free slots that hold a unit: the one with the least
// room to spare, or the one whose units' lifetimes end or start nearest to the unit's
// (so that lifetimes that follow each other fill one slot and leave the others free
// for values alive beside them).
enum class Fit { Tightest, Nearest };

// Slots with the lifetimes of the units placed in them so far.
class SlotTable {
 public:
  SlotTable(std::size_t units, Fit fit) : fit_(fit) { p_.slot_of_unit.assign(units, -1); }

  bool free_over(std::size_t s, const Unit& u) const {
    for (auto [f, l] : busy_[s])
      if (u.first <= l && f <= u.last) return false;
    return true;
  }
  // Steps between the unit and the nearest unit in slot s.
  int gap(std::size_t s, const Unit& u) const {
    int g = std::numeric_limits<int>::max();
    for (auto [f, l] : busy_[s]) g = std::min(g, f > u.last ? f - u.last : u.first - l);
    return g;
  }
  // Puts unit k in the free slot that holds it (the tightest or the nearest, by `fit`),
  // else in the largest free slot (grown to it), else in a new slot.
  void place(std::size_t k, const Unit& u) {
    int fit = -1, grow = -1;
    for (std::size_t s = 0; s < p_.size.size(); ++s) {
      if (!free_over(s, u)) continue;
      const int64_t have = p_.size[s];
      if (have >= u.bytes) {
        const auto f = static_cast<std::size_t>(fit);
        const bool better =
            fit < 0 || (fit_ == Fit::Tightest ? have < p_.size[f]
                                              : gap(s, u) < gap(f, u) ||
                                                    (gap(s, u) == gap(f, u) && have < p_.size[f]));
        if (better) fit = static_cast<int>(s);
      } else if (grow < 0 || have > p_.size[static_cast<std::size_t>(grow)]) {
        grow = static_cast<int>(s);
      }
    }
    int best = fit >= 0 ? fit : grow;
    if (best < 0) {
      best = static_cast<int>(p_.size.size());
      p_.size.push_back(0);
      busy_.emplace_back();
    }
    const auto b = static_cast<std::size_t>(best);
    p_.size[b] = std::max(p_.size[b], u.bytes);
    busy_[b].push_back({u.first, u.last});
    p_.slot_of_unit[k] = best;
  }
  Packing take() { return std::move(p_); }

 private:
  Fit fit_;
  Packing p_;
  std::vector<std::vector<std::pair<int, int>>> busy_;  // per slot: [first, last] of its units
};

// Greedy by size (TFLite's arena planner): the largest units first, each into the
// smallest slot whose units' lifetimes it does not overlap, so a slot never grows past
// its first unit.
Packing pack_by_size(const std::vector<Unit>& units, Fit fit) {
  std::vector<std::size_t> order(units.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return units[a].bytes > units[b].bytes; });
  SlotTable t(units.size(), fit);
  for (std::size_t k : order) t.place(k, units[k]);
  return t.take();
}

// Greedy by breadth (Pisarchyk and Lee, "Efficient Memory Management for Deep Neural
// Net Inference"): steps in order of the bytes alive across them, largest first; at
// each, its live units not yet placed, largest first, each into the free slot that
// holds it with the least to spare, else the largest free slot grown to it. Placing the
// widest step's values first packs where greedy by size leaves a large value alone in
// a slot that smaller ones alive beside it could have shared (after fusion removes the
// small values that used to fill the gaps).
Packing pack_by_breadth(const std::vector<Unit>& units, int n, Fit fit) {
  std::vector<std::vector<std::size_t>> live(static_cast<std::size_t>(n) + 1);
  std::vector<int64_t> breadth(live.size(), 0);
  for (std::size_t k = 0; k < units.size(); ++k)
    for (int s = std::max(units[k].first, 0); s <= units[k].last && s <= n; ++s) {
      live[static_cast<std::size_t>(s)].push_back(k);
      breadth[static_cast<std::size_t>(s)] += units[k].bytes;
    }
  std::vector<std::size_t> steps(live.size());
  for (std::size_t i = 0; i < steps.size(); ++i) steps[i] = i;
  std::stable_sort(steps.begin(), steps.end(),
                   [&](std::size_t a, std::size_t b) { return breadth[a] > breadth[b]; });
  SlotTable t(units.size(), fit);
  std::vector<bool> placed(units.size(), false);
  for (std::size_t s : steps) {
    auto& at = live[s];
    std::stable_sort(at.begin(), at.end(),
                     [&](std::size_t a, std::size_t b) { return units[a].bytes > units[b].bytes; });
    for (std::size_t k : at) {
      if (placed[k]) continue;
      placed[k] = true;
      t.place(k, units[k]);
    }
  }
  for (std::size_t k = 0; k < units.size(); ++k)
    if (!placed[k]) t.place(k, units[k]);
  return t.take();
}

// The arena is the sum of the slot sizes, and the step-order best fit above depends on
// the order values appear: removing values (fusion) can make it grow. Packings over
// whole lifetimes (by size and by breadth, each with either Fit) compete with it, and
// the plan keeps whichever totals least. Values without a static size (shape
// arithmetic the canonical passes could not fold) count 0 in every total and go last in
// the greedy orders; a few such values used to keep a whole model in step order, and
// then a fused program's fewer values could pack worse than the unfused ones.
template <class Estimate>
void pack_if_smaller(MemoryPlan& plan, const std::vector<int>& def_step,
                     const std::vector<int>& last_use, const std::vector<ValueId>& unit, int n,
                     Estimate estimate) {
  std::vector<Unit> units;
  std::vector<int> index(unit.size(), -1);
  int64_t best_total = 0;
  for (int64_t b : plan.slot_estimate) best_total += b;
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
  std::optional<Packing> best;
  for (Packing p :
       {pack_by_size(units, Fit::Tightest), pack_by_size(units, Fit::Nearest),
        pack_by_breadth(units, n, Fit::Tightest), pack_by_breadth(units, n, Fit::Nearest)}) {
    if (p.total() >= best_total) continue;
    best_total = p.total();
    best = std::move(p);
  }
  if (!best) return;
  for (std::size_t k = 0; k < units.size(); ++k)
    for (ValueId v : units[k].values) plan.slot_of_value[v] = best->slot_of_unit[k];
  plan.slot_estimate = best->size;
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
  pack_if_smaller(plan, def_step, last_use, unit, n, estimate);
  return plan;
}

}  // namespace fx
