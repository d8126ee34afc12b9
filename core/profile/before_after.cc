// SPDX-License-Identifier: Apache-2.0
#include "profile/before_after.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "profile/random_inputs.h"
#include "profile/winograd_probe.h"
#include "util/error.h"

namespace fx {
namespace {

void describe_outcome(const GroupBuild& b, GroupMeasurement& m) {
  switch (b.outcome) {
    case GroupOutcome::DnnlPostOps: m.status = "fused", m.backend = "onednn-postops"; break;
    case GroupOutcome::Compiled: m.status = "fused", m.backend = "generated-cpp"; break;
    case GroupOutcome::Runtime: m.status = "fallback", m.backend = "runtime-kernels"; break;
    case GroupOutcome::Excluded: m.status = "excluded", m.backend.clear(); break;
  }
  m.reason = b.detail;
}

std::vector<std::string> output_names(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId v : g.outputs()) names.push_back(g.value(v).name);
  return names;
}

// Step 2: each fused step alone against the unfused run. Returns the graph outputs of
// that run (the reference for step 3).
// Groups that fail are added to `excluded`.
std::vector<Tensor> check_groups(const Graph& g, const FusedProgram& p, const BeforeAfterOptions& o,
                                 const std::map<std::string, Tensor>& inputs,
                                 std::map<std::string, TensorDiff>& diffs,
                                 std::map<std::string, std::string>& excluded) {
  const int64_t opset = o.profile.opset;
  Executor ref(g, make_steps(g, opset), ExecutorOptions{o.profile.threads, opset});
  std::set<ValueId> wanted;
  for (const auto& b : p.groups)
    if (b.step) {
      wanted.insert(b.step->inputs.begin(), b.step->inputs.end());
      wanted.insert(b.step->outputs.begin(), b.step->outputs.end());
    }
  CapturedRun run = capture_values(ref, inputs, wanted);
  std::vector<std::pair<std::string, std::string>> failed;
  for (const auto& b : p.groups) {
    if (!b.step) continue;
    if (o.on_check) o.on_check(b.id, false);
    try {
      TensorDiff d = check_step(g, *b.step, run.values, ref.threads(), o.tolerance);
      diffs[b.id] = d;
      if (!d.match) failed.emplace_back(b.id, "outputs differ from the unfused run: " + d.where);
    } catch (const Error& e) {
      failed.emplace_back(b.id, std::string("its kernel failed when checked alone: ") + e.what());
    }
    if (o.on_check) o.on_check(b.id, true);
  }
  for (const auto& [id, why] : failed) {
    spdlog::warn("group {} excluded: {}", id, why);
    excluded[id] = why;
  }
  return std::move(run.outputs);
}

// A profile for terms only (times on it are never used).
DeviceProfile terms_profile() {
  DeviceProfile p;
  p.name = "terms-only";
  p.memory_bandwidth_bytes_per_s = p.peak_flops = 1;
  p.onchip_capacity_bytes = 1;
  return p;
}

// The cost model's terms of the kernel that runs `nodes` (one node, or a fused group).
std::optional<KernelTerms> kernel_terms(const Graph& g, const CostModel& cm,
                                        const std::vector<std::string>& nodes) {
  std::vector<NodeId> ids;
  for (const auto& n : nodes) {
    NodeId id = g.find_node(n);
    if (id == kNoNode) return std::nullopt;
    ids.push_back(id);
  }
  if (ids.empty()) return std::nullopt;
  Cost c = ids.size() == 1 ? cm.node(ids[0]) : cm.group(ids);
  if (!c.known) return std::nullopt;
  return terms_of(c);
}

void add_cost_terms(const Graph& g, BeforeAfterResult& r, int threads) {
  // The runtime's Winograd answers for this model's convolutions on the threads it ran
  // on: the terms say which ran so (KernelTerms::winograd).
  DeviceProfile p = terms_profile();
  p.winograd = probe_winograd(winograd_shapes(g), threads);
  CostModel cm(g, p);
  for (const auto& k : r.before.kernels) r.before_terms.push_back(kernel_terms(g, cm, k.nodes));
  for (const auto& k : r.after.kernels) r.after_terms.push_back(kernel_terms(g, cm, k.nodes));
  for (auto& m : r.groups) {
    m.fused_terms = kernel_terms(g, cm, m.nodes);
    if (!m.fused_terms) continue;
    for (const auto& n : m.nodes) {
      NodeId id = g.find_node(n);
      if (cm.op_class(id).no_kernel) continue;
      m.unfused_terms.emplace_back(n, terms_of(cm.node(id)));
    }
  }
}

void measure_groups(const std::vector<const FusionGroup*>& groups, const FusedProgram& p,
                    const BeforeAfterResult& r, const std::map<std::string, TensorDiff>& diffs,
                    std::vector<GroupMeasurement>& out) {
  for (const FusionGroup* fg : groups) {
    GroupMeasurement m = planned_measurement(*fg);
    const GroupBuild* b = p.find(fg->id);
    if (!b) {
      m.status = "excluded";
      m.reason = "not built";
      out.push_back(std::move(m));
      continue;
    }
    describe_outcome(*b, m);
    // A group that could not be generated whole may run as generated parts "<id>.N".
    bool live = b->step.has_value();
    auto fold_error = [&](const std::string& id) {
      if (auto it = diffs.find(id); it != diffs.end()) {
        m.max_abs_error = std::isnan(m.max_abs_error)
                              ? it->second.max_abs_error
                              : std::max(m.max_abs_error, it->second.max_abs_error);
        m.max_rel_error = std::isnan(m.max_rel_error)
                              ? it->second.max_rel_error
                              : std::max(m.max_rel_error, it->second.max_rel_error);
      }
    };
    fold_error(fg->id);
    int parts = 0;
    for (const auto& part : p.groups) {
      if (part.id.rfind(fg->id + ".", 0) != 0) continue;
      if (part.step) {
        ++parts;
        fold_error(part.id);
      } else {
        m.reason += "; part " + part.id + " " + std::string(group_outcome_name(part.outcome)) +
                    ": " + part.detail;
      }
    }
    if (!live && parts > 0) {
      live = true;
      m.status = "fused";
      m.backend = "generated-cpp";
    }
    if (live) {
      std::set<std::string> members(fg->nodes.begin(), fg->nodes.end());
      m.before_us = kernels_covering(r.before.kernels, members, /*every_member=*/true);
      m.after_us = kernels_covering(r.after.kernels, members, /*every_member=*/true);
      m.measured_saved_us = m.before_us - m.after_us;
    }
    out.push_back(std::move(m));
  }
}

}  // namespace

GroupMeasurement planned_measurement(const FusionGroup& group) {
  GroupMeasurement m;
  m.id = group.id;
  m.pattern = group.pattern;
  m.nodes = group.nodes;
  const GroupEstimate& e = group.estimate;
  if (e.known) m.predicted_saved_us = e.time_saved_s() * 1e6;
  if (e.known && e.interval_known()) {
    m.predicted_low_us = e.saved_low_s * 1e6;
    m.predicted_high_us = e.saved_high_s * 1e6;
  }
  m.estimate_profile = e.profile;
  m.predicted_by = e.saving_label();
  m.bytes_saved = e.bytes_saved();
  m.launches_saved = e.launches_saved();
  return m;
}

double kernels_covering(const std::vector<KernelStats>& kernels,
                        const std::set<std::string>& members, bool every_member) {
  std::set<std::string> covered;
  double us = 0;
  for (const auto& k : kernels) {
    bool inside = true, touches = false;
    for (const auto& n : k.nodes) {
      if (members.count(n))
        touches = true;
      else
        inside = false;
    }
    if (!touches) continue;
    if (!inside) return NAN;
    us += k.median_us;
    covered.insert(k.nodes.begin(), k.nodes.end());
  }
  return !every_member || covered == members ? us : NAN;
}

BeforeAfterResult run_before_after(const Graph& g, const std::vector<const FusionGroup*>& groups,
                                   const BeforeAfterOptions& o) {
  if (o.profile.runs < 1) throw Error("profile: --runs must be at least 1");
  if (o.profile.warmup < 0) throw Error("profile: --warmup must not be negative");
  const int64_t opset = o.profile.opset;
  std::map<std::string, Tensor> inputs = random_inputs(g, o.profile.seed);

  CodegenOptions co = o.codegen;
  co.opset = opset;
  if (co.threads == 0) co.threads = o.profile.threads;  // the threads both programs run on
  std::map<std::string, std::string> excluded = o.excluded;
  // A fresh program (kernels included) for each use: the compile is cached, and a
  // kernel is then never shared between executors.
  auto build = [&] {
    FusedProgram p = build_fused_program(g, groups, co);
    for (const auto& [id, why] : excluded)
      if (p.find(id)) p.exclude(g, id, why, opset);
    if (o.fault) inject_fault(p, *o.fault);
    return p;
  };

  std::map<std::string, TensorDiff> diffs;
  std::vector<Tensor> reference = check_groups(g, build(), o, inputs, diffs, excluded);

  ProfileOptions po = o.profile;
  po.source = "fusion-explorer cpu (unfused)";
  ProfileSession before(g, make_steps(g, opset), po);
  before.run(inputs, false);
  po.source = "fusion-explorer cpu (fused)";
  // Step 3: the first run of the program that will be timed is checked whole.
  const auto names = output_names(g);
  const auto steps = quantization_steps(g, g.outputs());
  FusedProgram p = build();
  auto after = std::make_unique<ProfileSession>(g, p.steps, po);
  TensorDiff whole =
      compare_outputs(reference, after->run(inputs, false), names, o.tolerance, steps);
  if (!whole.match) {
    // Errors within tolerance per group can add up. Only groups that changed their own
    // outputs at all can be the cause: keep the k with the smallest error, the largest k
    // for which the outputs still match (binary search; more groups, more error).
    std::vector<std::pair<double, std::string>> suspects;
    for (const auto& b : p.groups) {
      if (!b.step) continue;
      auto it = diffs.find(b.id);
      double err = it == diffs.end() ? INFINITY : it->second.max_rel_error;
      if (!(err == 0 && it->second.max_abs_error == 0)) suspects.emplace_back(err, b.id);
    }
    std::sort(suspects.begin(), suspects.end());
    const auto before_probe = excluded;
    auto probe = [&](std::size_t keep) {  // excludes suspects[keep..]; true when it matches
      excluded = before_probe;
      for (std::size_t i = keep; i < suspects.size(); ++i) excluded[suspects[i].second] = "";
      after.reset();
      p = build();
      after = std::make_unique<ProfileSession>(g, p.steps, po);
      return compare_outputs(reference, after->run(inputs, false), names, o.tolerance, steps).match;
    };
    if (suspects.empty() || !probe(0)) {
      // Not explained by the fused groups: keep them all and report the mismatch.
      spdlog::warn("the fused program's outputs differ ({}) and excluding groups does not help",
                   whole.where);
      excluded = before_probe;
      after.reset();
      p = build();
      after = std::make_unique<ProfileSession>(g, p.steps, po);
      after->run(inputs, false);
    } else {
      std::size_t lo = 0, hi = suspects.size();  // probe(lo) matches, probe(hi) does not
      while (hi - lo > 1) {
        std::size_t mid = (lo + hi) / 2;
        (probe(mid) ? lo : hi) = mid;
      }
      excluded = before_probe;
      for (std::size_t i = lo; i < suspects.size(); ++i) {
        std::string why = fmt::format(
            "the model's outputs differ when it is fused together with the {} groups of smaller "
            "error ({}); alone it matched (max rel error {:.3g})",
            lo, whole.where, suspects[i].first);
        spdlog::warn("group {} excluded: {}", suspects[i].second, why);
        excluded[suspects[i].second] = why;
      }
      after.reset();
      p = build();
      after = std::make_unique<ProfileSession>(g, p.steps, po);
      after->run(inputs, false);
    }
  }

  // Step 4: alternate, flipping the order each round, so that load and cache state
  // favour neither side. (One warm-up run of each is done above.)
  for (int i = 1; i < o.profile.warmup; ++i) {
    before.run(inputs, false);
    after->run(inputs, false);
  }
  for (int i = 0; i < o.profile.runs; ++i) {
    if (i % 2 == 0) {
      before.run(inputs, true);
      after->run(inputs, true);
    } else {
      after->run(inputs, true);
      before.run(inputs, true);
    }
  }
  BeforeAfterResult r;
  r.before = before.finish(inputs);
  r.after = after->finish(inputs);
  r.speedup = r.after.median_ms > 0 ? r.before.median_ms / r.after.median_ms : NAN;
  r.outputs = compare_outputs(r.before.outputs, r.after.outputs, names, o.tolerance, steps);
  r.tolerance = o.tolerance;
  r.codegen_note = p.note;
  measure_groups(groups, p, r, diffs, r.groups);
  add_cost_terms(g, r, co.threads);
  for (const auto& m : r.groups)
    if (!m.estimate_profile.empty()) {
      r.estimate_profile = m.estimate_profile;
      break;
    }
  return r;
}

}  // namespace fx
