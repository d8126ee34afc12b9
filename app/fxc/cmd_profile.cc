// SPDX-License-Identifier: Apache-2.0
// fxc profile: run a model on the CPU runtime and time it kernel by kernel.
// fxc trace-import: the same table for a trace another tool wrote.
//
// By default profiling happens in a child process (this program re-executed with
// --in-process --json), so a crashing or hanging kernel becomes a one-line error.

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "calibration/host_device.h"
#include "calibration/machine_facts.h"
#include "commands.h"
#include "cuda_device_cli.h"
#include "cuda_plan/device_spec.h"
#include "model_options.h"
#include "onnx/model_loader.h"
#include "plan_choice.h"
#include "profile/autotune_cache.h"
#include "profile/before_after.h"
#include "profile/before_after_child.h"
#include "profile/before_after_document.h"
#include "profile/before_after_json.h"
#include "profile/child_process.h"
#include "profile/child_profiler.h"
#include "profile/chrome_trace.h"
#include "profile/execution_device.h"
#include "profile/kernel_comparison.h"
#include "profile/kernel_table.h"
#include "profile/measured_rejection.h"
#include "profile/profile_json.h"
#include "profile/profiler.h"
#include "util/error.h"

namespace fxc {
namespace {

struct ProfileCliOptions {
  std::string model;
  ModelOptions mo;
  fx::ProfileOptions profile;
  std::string trace;
  std::string compare;
  double timeout_s = 600;
  std::size_t top = 30;
  bool json = false;
  bool in_process = false;
  int parent_pid = 0;  // set when a parent profiles through us (child_profiler)
  // Before/after (with --plan or --opt-level).
  std::string plan;
  int opt_level = -1;
  double threshold = 0.30;
  std::string device = "cpu";                // where to run: cpu | cuda
  std::string estimate_device = "cpu-host";  // device profile of the --opt-level analysis
  std::string trace_before, trace_after;
  std::string write_plan;            // the plan less the groups measured slower
  std::vector<std::string> exclude;  // internal: "ID=why", from a parent after a crash
  fx::Tolerance tolerance;           // ONNX's: rtol 1e-3, atol 1e-5
  // --autotune: measure every group the estimate proposes (the autotune cache not
  // consulted) and record them; implies --opt-level 2 without --plan or --opt-level.
  bool autotune = false;
  bool before_after() const { return !plan.empty() || opt_level >= 0; }
  PlanChoice plan_choice(bool name_the_plan) const {
    PlanChoice c{plan, opt_level, threshold, estimate_device, model, name_the_plan};
    c.autotune_cache = !autotune;
    c.threads = profile.threads;
    return c;
  }
};

// Our kernels against another tool's trace of the same model (--compare).
struct Comparison {
  std::string file;
  fx::Timeline other;
  std::vector<fx::KernelComparison> rows;

  Comparison(const std::string& path, const std::vector<fx::KernelStats>& ours)
      : file(path), other(fx::read_trace(path)) {
    rows = fx::compare_kernels(ours, fx::aggregate_kernels(other));
  }
  nlohmann::json json() const {
    return {{"file", file},
            {"source", other.source},
            {"median_ms", fx::median_run_us(other) / 1e3},
            {"rows", fx::kernel_comparison_json(rows)}};
  }
  void print(const std::string& ours, std::size_t top) const {
    std::string label = other.source.substr(0, other.source.find(' '));
    fmt::print("\nCompared with {} ({}), B/A = {} time / {} time\n", file, other.source, label,
               ours);
    fmt::print("{}", fx::format_comparison_table(rows, ours, label, top));
  }
};

void print_result(const ProfileCliOptions& o, const fx::ProfileResult& r, bool isolated) {
  std::optional<Comparison> cmp;
  if (!o.compare.empty()) cmp.emplace(o.compare, r.kernels);
  if (o.json) {
    nlohmann::json j = fx::profile_result_json(r);
    j["model"] = o.model;
    j["isolated"] = isolated;
    if (cmp) j["compare"] = cmp->json();
    fmt::print("{}\n", j.dump(2));
    return;
  }
  double kernel_us = 0;
  for (const auto& k : r.kernels) kernel_us += k.median_us;
  auto [lo, hi] = std::minmax_element(r.run_ms.begin(), r.run_ms.end());
  fmt::print("Model        {}\n", o.model);
  fmt::print("Device       {}{}\n", r.device, isolated ? " (child process)" : "");
  fmt::print("Runs         {} timed after {} warm-up\n", r.runs, r.warmup);
  fmt::print("Median       {:.3f} ms per run (min {:.3f}, max {:.3f})\n", r.median_ms,
             lo == r.run_ms.end() ? 0.0 : *lo, hi == r.run_ms.end() ? 0.0 : *hi);
  fmt::print("Activations  {} peak arena (with buffer reuse), {} without reuse\n\n",
             fx::format_bytes(r.peak_activation_bytes), fx::format_bytes(r.total_activation_bytes));
  fmt::print("{}", fx::format_kernel_table(r.kernels, o.top));
  fmt::print("\nBy op type\n{}", fx::format_op_summary(r.kernels));
  fmt::print("\nTotal        {} in {} kernels (sum of per-kernel medians)\n",
             fx::format_duration_us(kernel_us), r.kernels.size());
  if (!o.trace.empty()) fmt::print("Trace        {}\n", o.trace);
  if (cmp) cmp->print("fxc", o.top);
}

// ---- before/after ----------------------------------------------------------------

void write_json_file(const std::string& path, const nlohmann::json& j) {
  std::ofstream f(path);
  f << j.dump() << "\n";
  if (!f) throw fx::FileError(path, "cannot write the trace");
}

std::string num_or_dash(double v, const char* fmt_spec) {
  return std::isnan(v) ? "-" : fmt::format(fmt::runtime(fmt_spec), v);
}

void print_before_after(const ProfileCliOptions& o, const fx::BeforeAfterDocument& d) {
  fmt::print("Model        {}  ({})\n", o.model,
             o.plan.empty() ? fmt::format("opt level {}, groups above {:.0f}% accepted",
                                          o.opt_level, o.threshold * 100)
                            : "plan " + o.plan);
  fmt::print("Device       {}{}\n", d.device, o.in_process ? "" : " (child process)");
  fmt::print("Runs         {} timed per side after {} warm-up, before/after alternating\n", d.runs,
             d.warmup);
  fmt::print("Before       {} ms median, {} kernels (unfused)\n",
             num_or_dash(d.before.median_ms, "{:.3f}"), d.before.kernels.size());
  fmt::print("After        {} ms median, {} kernels (fused)\n",
             num_or_dash(d.after.median_ms, "{:.3f}"), d.after.kernels.size());
  fmt::print("Speedup      {}x\n", num_or_dash(d.speedup, "{:.3f}"));
  const bool match = d.outputs_match.value_or(false);
  fmt::print("Outputs      {} (max abs error {}, max rel error {}; rtol {:g}, atol {:g} {}{})\n",
             match ? "match" : "DIFFER", num_or_dash(d.max_abs_error, "{:.3g}"),
             num_or_dash(d.max_rel_error, "{:.3g}"), std::isnan(d.rtol) ? 0.0 : d.rtol,
             std::isnan(d.atol) ? 0.0 : d.atol,
             d.tolerance_mode.empty() ? std::string("absolute") : d.tolerance_mode,
             std::isnan(d.steps) ? std::string()
                                 : fmt::format(", quantized values {:g} step(s)", d.steps));
  if (!match) fmt::print("             {}\n", d.mismatch);
  if (!d.codegen_note.empty()) fmt::print("Codegen      {}\n", d.codegen_note);
  fmt::print("\n{:<12} {:<22} {:<9} {:<16} {:>13} {:>13} {:>11}\n", "group", "pattern", "status",
             "backend", "predicted us", "measured us", "max abs err");
  std::vector<std::string> notes;
  for (const auto& g : d.groups) {
    std::string pattern = g.pattern;
    if (pattern.size() > 22) pattern = pattern.substr(0, 19) + "...";
    fmt::print("{:<12} {:<22} {:<9} {:<16} {:>13} {:>13} {:>11}\n", g.id, pattern, g.status,
               g.backend, num_or_dash(g.predicted_saved_us, "{:.1f}"),
               num_or_dash(g.measured_saved_us, "{:.1f}"), num_or_dash(g.max_abs_error, "{:.2g}"));
    if (g.status != "fused" && !g.reason.empty())
      notes.push_back(fmt::format("{} {}: {}", g.id, g.status, g.reason));
  }
  fmt::print(
      "(us saved per run: predicted on device profile {}; measured = members' kernels "
      "before - fused kernel after)\n",
      d.estimate_profile);
  for (const auto& n : notes) fmt::print("{}\n", n);
  if (!o.trace_before.empty()) fmt::print("Trace before {}\n", o.trace_before);
  if (!o.trace_after.empty()) fmt::print("Trace after  {}\n", o.trace_after);
}

// The plan that was measured, less the groups measured slower (--write-plan): what the
// tool proposes after the measurement.
void write_corrected_plan(const ProfileCliOptions& o, const fx::LoadOptions& lo,
                          const std::vector<fx::MeasuredRejection>& slower) {
  auto m = fx::load_onnx(o.model, lo);
  fx::FusionPlan plan = plan_for(o.plan_choice(/*name_the_plan=*/false), m.graph);
  const int n = fx::reject_measured_slower(plan, slower);
  plan.save(o.write_plan);
  fmt::print(o.json ? stderr : stdout,
             "Plan         {} written, {} group(s) rejected after measurement\n", o.write_plan, n);
}

// Each group measured fused, into the autotune cache of this CPU (FX_AUTOTUNE_CACHE=off:
// not recorded). A cache that cannot be read or written is said and skipped: the
// measurement itself stands.
void record_autotune(const ProfileCliOptions& o, const fx::BeforeAfterDocument& d,
                     const fx::LoadOptions& lo) {
  // A child profiling for a parent leaves the recording to the parent.
  if (o.parent_pid > 0 || !fx::AutotuneCache::enabled()) return;
  const std::string path = fx::AutotuneCache::default_path(fx::host_machine_facts().cpu_model);
  std::FILE* out = o.json ? stderr : stdout;
  try {
    auto m = fx::load_onnx(o.model, lo);
    PlanChoice c = o.plan_choice(/*name_the_plan=*/false);
    c.autotune_cache = false;  // only the groups' shapes are wanted here
    const fx::FusionPlan plan = plan_for(c, m.graph);
    fx::AutotuneCache cache = fx::AutotuneCache::open(path);
    const int threads = resolved_threads(o.profile.threads);
    const std::string model = std::filesystem::path(o.model).stem().string();
    int n = 0;
    for (const auto& g : d.groups) {
      const fx::FusionGroup* group = plan.find(g.id);
      if (!group || g.status != "fused" || !std::isfinite(g.before_us) ||
          !std::isfinite(g.after_us))
        continue;
      cache.record(fx::group_signature(m.graph, *group, threads), g.before_us, g.after_us,
                   fx::measured_noise_us(d, g.nodes), g.pattern, model);
      ++n;
    }
    if (n == 0) return;
    cache.save();
    fmt::print(out, "Autotune     {} group(s) recorded in {}\n", n, path);
  } catch (const fx::FileError& e) {
    fmt::print(stderr, "fxc: autotune cache not updated: {}\n", e.what());
  }
}

void emit_before_after(const ProfileCliOptions& o, nlohmann::json doc, const fx::LoadOptions& lo) {
  if (!o.trace_before.empty()) write_json_file(o.trace_before, doc["before"]["trace"]);
  if (!o.trace_after.empty()) write_json_file(o.trace_after, doc["after"]["trace"]);
  const fx::BeforeAfterDocument d = fx::read_before_after_document(doc, "the before/after result");
  // A group measured slower fused than apart is rejected, whatever its estimate said.
  const auto slower = fx::measured_rejections(d.groups);
  doc["rejected_after_measurement"] = nlohmann::json::array();
  for (const auto& r : slower)
    doc["rejected_after_measurement"].push_back(
        {{"id", r.id}, {"pattern", r.pattern}, {"slower_us", r.slower_us}, {"reason", r.line()}});
  if (o.json) {
    fmt::print("{}\n", doc.dump(2));
  } else {
    print_before_after(o, d);
    for (const auto& r : slower) fmt::print("{}\n", r.line());
  }
  if (!o.write_plan.empty()) write_corrected_plan(o, lo, slower);
  record_autotune(o, d, lo);
}

std::vector<std::string> before_after_child_args(const ProfileCliOptions& o,
                                                 const fx::LoadOptions& lo) {
  std::vector<std::string> argv = {fx::self_executable_path(),
                                   "profile",
                                   o.model,
                                   "--json",
                                   "--in-process",
                                   "--runs",
                                   std::to_string(o.profile.runs),
                                   "--warmup",
                                   std::to_string(o.profile.warmup),
                                   "--threads",
                                   std::to_string(o.profile.threads),
                                   "--seed",
                                   std::to_string(o.profile.seed),
                                   "--threshold",
                                   fmt::format("{}", o.threshold),
                                   "--estimate-device",
                                   o.estimate_device,
                                   "--rtol",
                                   fmt::format("{}", o.tolerance.rtol),
                                   "--atol",
                                   fmt::format("{}", o.tolerance.atol),
                                   "--tolerance",
                                   o.tolerance.mode(),
                                   "--steps",
                                   fmt::format("{}", o.tolerance.steps)};
  if (!o.plan.empty()) argv.insert(argv.end(), {"--plan", o.plan});
  if (o.opt_level >= 0) argv.insert(argv.end(), {"--opt-level", std::to_string(o.opt_level)});
  if (o.autotune) argv.push_back("--autotune");
  for (const auto& [name, value] : lo.dims)
    argv.insert(argv.end(), {"--dim", name + "=" + std::to_string(value)});
  for (const auto& a : o.mo.child_args()) argv.push_back(a);
  return argv;
}

int run_before_after_cli(const ProfileCliOptions& o, const fx::LoadOptions& lo) {
  fx::require_cpu_execution(o.device);
  if (!o.in_process) {
    fx::BeforeAfterChildRequest q;
    q.argv = before_after_child_args(o, lo);
    q.model = o.model;
    q.timeout_s = o.timeout_s;
    emit_before_after(o, fx::before_after_in_child(q), lo);
    return 0;
  }
  if (o.parent_pid > 0) fx::die_with_parent(o.parent_pid);
  auto m = fx::load_onnx(o.model, lo);
  fx::FusionPlan plan = plan_for(o.plan_choice(/*name_the_plan=*/true), m.graph);
  fx::BeforeAfterOptions bo;
  bo.profile = o.profile;
  bo.tolerance = o.tolerance;
  bo.profile.opset = default_opset(m.info);
  bo.codegen.stem = std::filesystem::path(o.model).stem().string();
  bo.excluded = fx::excluded_groups(o.exclude);
  // Markers on stderr, so that a parent can tell which group's kernel killed us.
  bo.on_check = [](const std::string& id, bool done) {
    fmt::print(stderr, "{}\n", fx::check_marker(id, done));
    std::fflush(stderr);
  };
  if (const char* f = std::getenv("FXC_TEST_BREAK_GROUP"); f && *f)
    bo.fault = fx::parse_fault_spec(f);
  fx::BeforeAfterResult r = fx::run_before_after(m.graph, plan.accepted(), bo);
  fx::BeforeAfterMeta meta;
  meta.model = o.model;
  meta.plan = o.plan;
  meta.opt_level = o.plan.empty() ? o.opt_level : -1;
  meta.seed = o.profile.seed;
  emit_before_after(o, fx::before_after_json(r, meta), lo);
  return 0;
}

// --device cuda[:N]: in this process (no child), through the CUDA executor.
int run_cuda_profile(const ProfileCliOptions& o, const fx::LoadOptions& lo,
                     const fx::cuda::DeviceSpec& spec) {
  require_cuda_device(spec);
  auto m = fx::load_onnx(o.model, lo);
  if (!o.json) print_model_header(m);
  CudaRunOptions co;
  co.device = spec;
  co.profile = o.profile;
  co.profile.opset = default_opset(m.info);
  co.tolerance = o.tolerance;
  co.stem = std::filesystem::path(o.model).stem().string();
  if (o.before_after()) {
    fx::FusionPlan plan = plan_for(
        {o.plan, o.opt_level, o.threshold, o.estimate_device, o.model, /*name_the_plan=*/true},
        m.graph);
    fx::BeforeAfterResult r = before_after_on_cuda(m.graph, plan.accepted(), co);
    fx::BeforeAfterMeta meta;
    meta.model = o.model;
    meta.plan = o.plan;
    meta.opt_level = o.plan.empty() ? o.opt_level : -1;
    meta.seed = o.profile.seed;
    ProfileCliOptions in_process = o;
    in_process.in_process = true;  // the header says no child process
    emit_before_after(in_process, fx::before_after_json(r, meta), lo);
    return 0;
  }
  fx::ProfileResult r = profile_on_cuda(m.graph, co);
  if (!o.trace.empty()) fx::write_chrome_trace(o.trace, r.representative_timeline());
  print_result(o, r, false);
  return 0;
}

int run_profile(const ProfileCliOptions& given) {
  ProfileCliOptions o = given;
  o.mo = with_plan_passes(o.mo, o.plan);
  if (o.autotune && o.plan.empty() && o.opt_level < 0) o.opt_level = 2;
  const fx::LoadOptions lo = o.mo.load_options();
  if (const auto spec = fx::cuda::parse_device_spec(o.device); spec.cuda)
    return run_cuda_profile(o, lo, spec);
  // The header of a run in this process; a child reads the model the same way (the
  // assumed dims follow from the model, the pass options are passed on).
  if (!o.in_process && !o.json) print_model_header(fx::load_onnx(o.model, lo));
  if (o.before_after()) return run_before_after_cli(o, lo);
  if (!o.compare.empty()) fx::read_trace(o.compare);  // a bad file fails before profiling
  if (o.in_process) {
    if (o.parent_pid > 0) fx::die_with_parent(o.parent_pid);
    auto m = fx::load_onnx(o.model, lo);
    fx::ProfileOptions po = o.profile;
    po.opset = default_opset(m.info);
    fx::ProfileResult r = fx::Profiler(po).profile(m.graph);
    if (!o.trace.empty()) fx::write_chrome_trace(o.trace, r.representative_timeline());
    print_result(o, r, false);
    return 0;
  }
  fx::ChildProfileRequest req;
  req.fxc_path = fx::self_executable_path();
  req.model = o.model;
  req.dims = lo.dims;
  req.extra_args = o.mo.child_args();
  req.options = o.profile;
  req.timeout_s = o.timeout_s;
  fx::ProfileResult r = fx::profile_in_child(req);
  if (!o.trace.empty()) fx::write_chrome_trace(o.trace, r.timeline);
  print_result(o, r, true);
  return 0;
}

struct ImportOptions {
  std::string file;
  std::string compare;
  std::size_t top = 30;
  bool json = false;
};

int run_trace_import(const ImportOptions& o) {
  fx::Timeline t = fx::read_trace(o.file);
  auto kernels = fx::aggregate_kernels(t);
  const double median_us = fx::median_run_us(t);
  std::optional<Comparison> cmp;
  if (!o.compare.empty()) cmp.emplace(o.compare, kernels);
  if (o.json) {
    nlohmann::json j = {{"file", o.file},
                        {"source", t.source},
                        {"device", t.device},
                        {"events", t.events.size()},
                        {"runs", t.run_count()},
                        {"median_ms", median_us / 1e3},
                        {"kernels", fx::kernel_stats_json(kernels)}};
    if (cmp) j["compare"] = cmp->json();
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("Trace        {}\n", o.file);
  fmt::print("Source       {}{}\n", t.source, t.device.empty() ? "" : " (" + t.device + ")");
  fmt::print("Events       {} kernel events in {} run(s)\n", t.events.size(), t.run_count());
  fmt::print("Median       {} kernel time per run\n\n", fx::format_duration_us(median_us));
  fmt::print("{}", fx::format_kernel_table(kernels, o.top));
  if (cmp) cmp->print(t.source.substr(0, t.source.find(' ')), o.top);
  return 0;
}

}  // namespace

void register_profile(CLI::App& app, Runner& run) {
  auto o = std::make_shared<ProfileCliOptions>();
  auto* cmd = app.add_subcommand(
      "profile", "Time a model kernel by kernel; with --plan/--opt-level, unfused vs fused");
  cmd->add_option("model", o->model, "ONNX model file")->required();
  cmd->add_option("--runs", o->profile.runs, "Timed runs (the median is reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->profile.warmup, "Untimed warm-up runs first")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", o->profile.threads, "Intra-op threads (0: all hardware threads)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->profile.seed, "Seed of the random inputs")->capture_default_str();
  add_model_options(cmd, o->mo);
  cmd->add_option("--trace", o->trace, "Write the median run as a Chrome trace (Perfetto)");
  cmd->add_option("--compare", o->compare,
                  "Compare kernel by kernel with a Chrome trace or ONNX Runtime profile");
  cmd->add_option("--timeout", o->timeout_s, "Seconds before the profiling process is killed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--top", o->top, "Rows of the kernel table (0: all)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object instead of text");
  cmd->add_flag("--in-process", o->in_process,
                "Profile in this process instead of a child (a crash then ends fxc)");
  cmd->add_option("--parent-pid", o->parent_pid)->group("");  // internal: see child_profiler
  cmd->add_option("--plan", o->plan,
                  "Before/after: run unfused and fused with this plan's accepted groups");
  cmd->add_option("--opt-level", o->opt_level,
                  "Before/after: analyze at this level, accept every group above --threshold")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--threshold", o->threshold, "Traffic reduction a group needs (--opt-level)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--estimate-device", o->estimate_device,
                  "Device profile of the predicted savings (--opt-level analysis)")
      ->capture_default_str();
  cmd->add_option("--device", o->device, "Run on cpu, or on a GPU: cuda or cuda:N")
      ->capture_default_str();
  cmd->add_option("--trace-before", o->trace_before,
                  "Before/after: write the unfused representative run as a Chrome trace");
  cmd->add_option("--trace-after", o->trace_after,
                  "Before/after: write the fused representative run as a Chrome trace");
  cmd->add_option("--rtol", o->tolerance.rtol,
                  "Before/after: relative tolerance of the output check (ONNX's)")
      ->capture_default_str();
  cmd->add_option("--steps", o->tolerance.steps,
                  "Before/after: quantized values (8-bit tensors, DequantizeLinear outputs) may "
                  "differ by this many quantization steps")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--atol", o->tolerance.atol,
                  "Before/after: absolute tolerance of the output check (ONNX's)")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--tolerance", [o](const std::string& m) { o->tolerance.scaled = m == "scaled"; },
         "Before/after: scaled (default: atol times the output's largest magnitude, since "
         "summation order errors grow with it) or absolute (ONNX's node-test form)")
      ->check(CLI::IsMember({"scaled", "absolute"}));
  cmd->add_option("--write-plan", o->write_plan,
                  "Before/after: write the plan less the groups measured slower fused than "
                  "apart (each rejected with the measurement as its reason)");
  cmd->add_flag("--autotune", o->autotune,
                "Before/after: measure every group the estimate proposes (ignoring what the "
                "autotune cache says) and record each in it; --opt-level 2 unless given");
  cmd->add_option("--exclude-group", o->exclude)->group("");  // internal: ID=why, from a parent
  cmd->footer(
      "Examples:\n"
      "  fxc profile resources/models/tiny_cnn.onnx --runs 20 --threads 2\n"
      "  fxc profile resnet18.onnx --trace resnet18.json   # open in ui.perfetto.dev\n"
      "  fxc profile gpt2.onnx --dim batch=1 --dim seq=128 --json\n"
      "  fxc profile resnet18.onnx --compare onnxruntime_profile.json   # ORT's profiler JSON\n"
      "  fxc profile resources/models/tiny_cnn.onnx --opt-level 2 --threads 2   # unfused vs "
      "fused\n"
      "  fxc profile resnet18.onnx --opt-level 2 --runs 20 --json > before_after.json\n"
      "  fxc profile resources/models/tiny_cnn.onnx --autotune --threads 2   # fill the "
      "autotune cache\n"
      "  fxc profile gpt2.onnx --dim batch=1 --dim seq=128 --plan plan.json "
      "--trace-before b.json --trace-after a.json");
  cmd->callback([o, &run] { run = [o] { return run_profile(*o); }; });

  auto io = std::make_shared<ImportOptions>();
  auto* imp = app.add_subcommand("trace-import",
                                 "Per-kernel table of a Chrome trace or ONNX Runtime profile JSON");
  imp->add_option("file", io->file, "Trace file (Chrome trace events, ONNX Runtime profile)")
      ->required();
  imp->add_option("--compare", io->compare, "A second trace to compare with, kernel by kernel");
  imp->add_option("--top", io->top, "Rows of the kernel table (0: all)")->capture_default_str();
  imp->add_flag("--json", io->json, "Print one JSON object instead of text");
  imp->footer(
      "Examples:\n"
      "  fxc trace-import onnxruntime_profile__2026-01-01.json\n"
      "  fxc trace-import resnet18.json --json\n"
      "  fxc trace-import before.json --compare after.json");
  imp->callback([io, &run] { run = [io] { return run_trace_import(*io); }; });
}

}  // namespace fxc
