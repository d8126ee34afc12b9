// fxc profile: run a model on the CPU runtime and time it kernel by kernel.
// fxc trace-import: the same table for a trace another tool wrote.
//
// By default profiling happens in a child process (this program re-executed with
// --in-process --json), so a crashing or hanging kernel becomes a one-line error.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "onnx/model_loader.h"
#include "profile/child_process.h"
#include "profile/child_profiler.h"
#include "profile/chrome_trace.h"
#include "profile/kernel_comparison.h"
#include "profile/kernel_table.h"
#include "profile/profile_json.h"
#include "profile/profiler.h"

namespace fxc {
namespace {

struct ProfileCliOptions {
  std::string model;
  std::vector<std::string> dims;
  fx::ProfileOptions profile;
  std::string trace;
  std::string compare;
  double timeout_s = 600;
  std::size_t top = 30;
  bool json = false;
  bool in_process = false;
  int parent_pid = 0;  // set when a parent profiles through us (child_profiler)
};

int64_t default_opset(const fx::ModelInfo& info) {
  for (const auto& [domain, version] : info.opsets)
    if (domain.empty() || domain == "ai.onnx") return version;
  return 0;
}

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

int run_profile(const ProfileCliOptions& o) {
  fx::LoadOptions lo;
  for (const auto& d : o.dims) fx::parse_dim_binding(d, lo);
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
  auto* cmd = app.add_subcommand("profile", "Run a model on the CPU and time it kernel by kernel");
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
  cmd->add_option("--dim", o->dims, "Bind a symbolic dimension, NAME=N (repeatable)");
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
  cmd->footer(
      "Examples:\n"
      "  fxc profile resources/models/tiny_cnn.onnx --runs 20 --threads 2\n"
      "  fxc profile resnet18.onnx --trace resnet18.json   # open in ui.perfetto.dev\n"
      "  fxc profile gpt2.onnx --dim batch=1 --dim seq=128 --json\n"
      "  fxc profile resnet18.onnx --compare onnxruntime_profile.json   # ORT's profiler JSON");
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
