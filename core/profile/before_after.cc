#include "profile/before_after.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "profile/random_inputs.h"
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

// The group that `fault.selector` names (an id, or #N: the N-th group of the plan),
// when it has a fused step.
GroupBuild* fault_target(FusedProgram& p, const std::string& selector) {
  if (!selector.empty() && selector[0] == '#') {
    auto n = static_cast<std::size_t>(std::stoul(selector.substr(1)));
    return n < p.groups.size() && p.groups[n].step ? &p.groups[n] : nullptr;
  }
  for (auto& b : p.groups)
    if (b.id == selector && b.step) return &b;
  return nullptr;
}

void inject(FusedProgram& p, const FaultSpec& fault) {
  GroupBuild* b = fault_target(p, fault.selector);
  if (!b) {
    spdlog::warn("FXC_TEST_BREAK_GROUP: no fused group '{}'", fault.selector);
    return;
  }
  spdlog::warn("FXC_TEST_BREAK_GROUP: breaking the kernel of group {} on purpose", b->id);
  b->step->kernel = broken_kernel(b->step->kernel, fault.mode);
  for (auto& s : p.steps)
    if (s.name == b->id) s.kernel = b->step->kernel;
}

std::vector<std::string> output_names(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId v : g.outputs()) names.push_back(g.value(v).name);
  return names;
}

// Step 2: each fused step alone against the unfused run. Returns the graph outputs of
// that run (the reference for step 3).
std::vector<Tensor> check_groups(const Graph& g, FusedProgram& p, const BeforeAfterOptions& o,
                                 const std::map<std::string, Tensor>& inputs,
                                 std::map<std::string, TensorDiff>& diffs) {
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
    p.exclude(g, id, why, opset);
  }
  return std::move(run.outputs);
}

// Step 3: while the whole fused program's outputs differ, drop the worst group.
void check_whole_program(const Graph& g, FusedProgram& p, const BeforeAfterOptions& o,
                         const std::map<std::string, Tensor>& inputs,
                         const std::vector<Tensor>& reference,
                         std::map<std::string, TensorDiff>& diffs) {
  const auto names = output_names(g);
  for (std::size_t round = 0; round <= p.groups.size(); ++round) {
    Executor fused(g, p.steps, ExecutorOptions{o.profile.threads, o.profile.opset});
    TensorDiff d = compare_outputs(reference, fused.run(inputs), names, o.tolerance);
    if (d.match) return;
    const GroupBuild* worst = nullptr;
    double worst_err = -1;
    for (const auto& b : p.groups) {
      if (!b.step) continue;
      auto it = diffs.find(b.id);
      double err = it == diffs.end() ? INFINITY : it->second.max_rel_error;
      if (err > worst_err) worst = &b, worst_err = err;
    }
    if (!worst) return;  // nothing fused left: the outputs differ for another reason
    std::string why = fmt::format(
        "the model's outputs differ with it ({}); it matched alone (max rel error {:.3g}) but "
        "errors add up downstream, and it had the largest",
        d.where, worst_err);
    spdlog::warn("group {} excluded: {}", worst->id, why);
    p.exclude(g, std::string(worst->id), why, o.profile.opset);
  }
}

void measure_groups(const std::vector<const FusionGroup*>& groups, const FusedProgram& p,
                    const BeforeAfterResult& r, const std::map<std::string, TensorDiff>& diffs,
                    std::vector<GroupMeasurement>& out) {
  std::map<std::string, double> node_us, kernel_us;
  for (const auto& k : r.before.kernels)
    if (k.nodes.size() == 1) node_us[k.nodes[0]] += k.median_us;
  for (const auto& k : r.after.kernels) kernel_us[k.name] = k.median_us;
  for (const FusionGroup* fg : groups) {
    GroupMeasurement m;
    m.id = fg->id;
    m.pattern = fg->pattern;
    m.nodes = fg->nodes;
    const GroupEstimate& e = fg->estimate;
    if (e.known) m.predicted_saved_us = e.time_saved_s() * 1e6;
    m.estimate_profile = e.profile;
    m.bytes_saved = e.bytes_saved();
    m.launches_saved = e.launches_saved();
    const GroupBuild* b = p.find(fg->id);
    if (!b) {
      m.status = "excluded";
      m.reason = "not built";
      out.push_back(std::move(m));
      continue;
    }
    describe_outcome(*b, m);
    if (auto it = diffs.find(fg->id); it != diffs.end()) {
      m.max_abs_error = it->second.max_abs_error;
      m.max_rel_error = it->second.max_rel_error;
    }
    auto after = kernel_us.find(fg->id);
    if (b->step && after != kernel_us.end()) {
      double before = 0;
      bool all = true;
      for (const auto& n : fg->nodes) {
        auto it = node_us.find(n);
        if (it == node_us.end())
          all = false;
        else
          before += it->second;
      }
      if (all) {
        m.before_us = before;
        m.after_us = after->second;
        m.measured_saved_us = before - after->second;
      }
    }
    out.push_back(std::move(m));
  }
}

}  // namespace

BeforeAfterResult run_before_after(const Graph& g, const std::vector<const FusionGroup*>& groups,
                                   const BeforeAfterOptions& o) {
  if (o.profile.runs < 1) throw Error("profile: --runs must be at least 1");
  if (o.profile.warmup < 0) throw Error("profile: --warmup must not be negative");
  const int64_t opset = o.profile.opset;
  std::map<std::string, Tensor> inputs = random_inputs(g, o.profile.seed);

  CodegenOptions co = o.codegen;
  co.opset = opset;
  FusedProgram p = build_fused_program(g, groups, co);
  for (const auto& [id, why] : o.excluded)
    if (p.find(id)) p.exclude(g, id, why, opset);
  if (o.fault) inject(p, *o.fault);

  std::map<std::string, TensorDiff> diffs;
  std::vector<Tensor> reference = check_groups(g, p, o, inputs, diffs);
  check_whole_program(g, p, o, inputs, reference, diffs);

  // Step 4: alternate, flipping the order each round, so that load and cache state
  // favour neither side.
  ProfileOptions po = o.profile;
  po.source = "fusion-explorer cpu (unfused)";
  ProfileSession before(g, make_steps(g, opset), po);
  po.source = "fusion-explorer cpu (fused)";
  ProfileSession after(g, p.steps, po);
  for (int i = 0; i < o.profile.warmup; ++i) {
    before.run(inputs, false);
    after.run(inputs, false);
  }
  for (int i = 0; i < o.profile.runs; ++i) {
    if (i % 2 == 0) {
      before.run(inputs, true);
      after.run(inputs, true);
    } else {
      after.run(inputs, true);
      before.run(inputs, true);
    }
  }
  BeforeAfterResult r;
  r.before = before.finish(inputs);
  r.after = after.finish(inputs);
  r.speedup = r.after.median_ms > 0 ? r.before.median_ms / r.after.median_ms : NAN;
  r.outputs = compare_outputs(r.before.outputs, r.after.outputs, output_names(g), o.tolerance);
  r.tolerance = o.tolerance;
  r.codegen_note = p.note;
  measure_groups(groups, p, r, diffs, r.groups);
  for (const auto& m : r.groups)
    if (!m.estimate_profile.empty()) {
      r.estimate_profile = m.estimate_profile;
      break;
    }
  return r;
}

}  // namespace fx
