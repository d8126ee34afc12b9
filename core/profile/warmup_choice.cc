// SPDX-License-Identifier: Apache-2.0
#include "profile/warmup_choice.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "profile/bandwidth_summary.h"

namespace fx {
namespace {

// Each step's nanoseconds in each timed round.
std::vector<std::vector<double>> step_times(Executor& ex, const std::map<std::string, Tensor>& in,
                                            int round, int rounds,
                                            std::vector<std::vector<double>> times) {
  if (times.empty())
    times.assign(ex.steps().size(), std::vector<double>(static_cast<std::size_t>(rounds), 0.0));
  ex.set_step_observer([&](const StepEvent& e) {
    times[static_cast<std::size_t>(e.step)][static_cast<std::size_t>(round)] +=
        double(e.end_ns - e.start_ns);
  });
  try {
    ex.run(in);
  } catch (...) {
    ex.set_step_observer({});
    throw;
  }
  ex.set_step_observer({});
  return times;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * double(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - double(lo)) * (v[hi] - v[lo]);
}

double half_iqr(const std::vector<double>& v) {
  return (quantile(v, 0.75) - quantile(v, 0.25)) / 2;
}

// Per round, the summed time (µs) of the unfused steps that compute `members`; empty
// when a step computes members and other nodes too, or none computes any member.
std::vector<double> members_unfused_us(const Executor& ex,
                                       const std::vector<std::vector<double>>& times,
                                       const std::set<NodeId>& members, int rounds) {
  std::vector<double> us(static_cast<std::size_t>(rounds), 0.0);
  bool any = false;
  for (std::size_t s = 0; s < ex.steps().size(); ++s) {
    const auto& nodes = ex.steps()[s].nodes;
    const auto inside =
        std::count_if(nodes.begin(), nodes.end(), [&](NodeId n) { return members.count(n) > 0; });
    if (inside == 0) continue;
    if (inside != static_cast<long>(nodes.size())) return {};
    any = true;
    for (int r = 0; r < rounds; ++r)
      us[static_cast<std::size_t>(r)] += times[s][static_cast<std::size_t>(r)] / 1e3;
  }
  return any ? us : std::vector<double>{};
}

// Times `candidates` (indices into p.groups) over `rounds` alternating rounds; returns
// those slower fused beyond the noise (their indices in `slower_idx`), counting the groups
// that could be compared in `timed`.
std::vector<GroupFallback> measure_slower(const Graph& g, const FusedProgram& p, Executor& unfused,
                                          Executor& fused, const std::map<std::string, Tensor>& in,
                                          const std::vector<std::size_t>& candidates, int rounds,
                                          int* timed, std::vector<std::size_t>* slower_idx) {
  std::vector<GroupFallback> out;
  std::vector<std::vector<double>> tu, tf;
  for (int r = 0; r < rounds; ++r) {
    tu = step_times(unfused, in, r, rounds, std::move(tu));
    tf = step_times(fused, in, r, rounds, std::move(tf));
  }
  for (std::size_t i : candidates) {
    const GroupBuild& b = p.groups[i];
    std::vector<double> fused_us(static_cast<std::size_t>(rounds), 0.0);
    bool found = false;
    for (std::size_t s = 0; s < fused.steps().size(); ++s) {
      if (fused.steps()[s].group_id != static_cast<int>(i)) continue;
      found = true;
      for (int r = 0; r < rounds; ++r)
        fused_us[static_cast<std::size_t>(r)] += tf[s][static_cast<std::size_t>(r)] / 1e3;
    }
    std::set<NodeId> members;
    for (const auto& name : b.nodes)
      if (NodeId n = g.find_node(name); n != kNoNode) members.insert(n);
    const std::vector<double> unfused_us = members_unfused_us(unfused, tu, members, rounds);
    if (!found || unfused_us.empty()) continue;
    if (timed) ++*timed;
    std::vector<double> diff(static_cast<std::size_t>(rounds));
    for (std::size_t r = 0; r < diff.size(); ++r) diff[r] = fused_us[r] - unfused_us[r];
    const double noise = std::max(half_iqr(fused_us), half_iqr(unfused_us));
    spdlog::debug("warm-up choice: {} fused {:.1f} us, unfused {:.1f} us, noise {:.1f} us", b.id,
                  median_of(fused_us), median_of(unfused_us), noise);
    if (quantile(diff, 0.25) <= 0 || median_of(diff) <= noise) continue;
    GroupFallback f;
    f.id = b.id;
    f.pattern = b.pattern;
    f.fused_us = median_of(fused_us);
    f.unfused_us = median_of(unfused_us);
    f.noise_us = noise;
    out.push_back(std::move(f));
    slower_idx->push_back(i);
  }
  return out;
}

}  // namespace

std::string GroupFallback::line() const {
  return fmt::format(
      "fell back at warm-up: {} {} fused {:.1f} \u00b5s > unfused {:.1f} \u00b5s (noise {:.1f} "
      "\u00b5s)",
      id, pattern, fused_us, unfused_us, noise_us);
}

WarmupChoice choose_faster_groups(const Graph& g, FusedProgram& p, Executor& unfused,
                                  const std::map<std::string, Tensor>& in,
                                  const WarmupChoiceOptions& o) {
  WarmupChoice c;
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < p.groups.size(); ++i) {
    const GroupBuild& b = p.groups[i];
    if (!b.step) continue;
    if (o.decided && o.decided(b)) {
      ++c.decided;
      continue;
    }
    candidates.push_back(i);
  }
  const int rounds = std::max(o.rounds, 4);
  if (candidates.empty()) return c;
  ExecutorOptions eo;
  eo.threads = o.threads;
  eo.opset = o.opset;
  Executor fused(g, p.steps, eo);
  // One untimed round each: oneDNN primitives are made and weights reordered on the
  // first run.
  unfused.run(in);
  fused.run(in);
  // A second pass over the groups the first found slower: a group falls back only when
  // both say so (under load, one pass can find a tie slower).
  std::vector<GroupFallback> slower;
  for (int pass = 0; pass < 2 && !candidates.empty(); ++pass) {
    std::vector<std::size_t> again;
    slower = measure_slower(g, p, unfused, fused, in, candidates, rounds,
                            pass == 0 ? &c.timed : nullptr, &again);
    candidates = std::move(again);
  }
  std::map<std::string, std::string> why;
  for (auto& f : slower) {
    why[f.id] = fmt::format(
        "measured slower fused at warm-up ({:.1f} \u00b5s fused, {:.1f} \u00b5s unfused, noise "
        "{:.1f} \u00b5s): the members run as unfused steps",
        f.fused_us, f.unfused_us, f.noise_us);
    c.fell_back.push_back(std::move(f));
  }
  if (!why.empty()) p.exclude(g, why, o.opset);
  return c;
}

}  // namespace fx
