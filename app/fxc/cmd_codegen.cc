// SPDX-License-Identifier: Apache-2.0
// fxc codegen: print or write the generated kernels of a plan's groups; with --bench,
// time the model unfused and fused in our runtime; with --bandwidth, compare a
// generated elementwise chain with a generated stream copy on a large tensor.
// Wiring only: core/codegen generates, core/profile times (codegen_bench.h,
// bandwidth_bench.h); this parses the options and prints.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "calibration/host_device.h"
#include "codegen/fused_program.h"
#include "commands.h"
#include "model_options.h"
#include "onnx/model_loader.h"
#include "onnx/tensor_file.h"
#include "plan_choice.h"
#include "profile/autotune_cache.h"
#include "profile/bandwidth_bench.h"
#include "profile/codegen_bench.h"
#include "util/error.h"

namespace fxc {
namespace {

struct CodegenCmd {
  std::string model, plan, out_dir, group, device = "cpu-host";
  int opt_level = -1;
  double threshold = 0.30;
  ModelOptions mo;
  int bench = 0;
  int threads = 0;
  double bandwidth_mb = 0;
  int reps = 5;
  double evict_mb = 64;
  bool steps = false;
  bool json = false;
  bool interleaved_only = false;
  bool keep_slower = false;
  std::string inputs_dir, outputs_dir;
  std::string cuda_out;
};

// DIR/input_<i>.pb for the graph's runtime inputs (ONNX test-data and ort_run.js
// --save-inputs layout): matched by the name each file carries, else by position.
std::map<std::string, fx::Tensor> read_inputs(const std::string& dir, const fx::Graph& g) {
  std::map<std::string, fx::Tensor> in;
  const auto ids = g.runtime_inputs();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string path = fmt::format("{}/input_{}.pb", dir, i);
    std::string name;
    auto data = fx::read_tensor_file(path, &name);
    if (name.empty() || g.find_value(name) == fx::kNoValue) name = g.value(ids[i]).name;
    in[name] = fx::Tensor::from_data(data);
  }
  return in;
}

int run_bandwidth(const CodegenCmd& o) {
  const fx::BandwidthShapes sh = fx::bandwidth_shapes(o.bandwidth_mb);
  if (!o.cuda_out.empty()) {
    const std::string source = fx::bandwidth_cuda_source(o.bandwidth_mb);
    std::ofstream f(o.cuda_out);
    f << source;
    if (!f) throw fx::FileError(o.cuda_out, "cannot write");
    fmt::print("{}: CUDA for stream-copy, chain (x [{}]), layernorm and softmax (m [{}, {}])\n",
               o.cuda_out, sh.n, sh.rows, sh.cols);
    return 0;
  }
  const fx::BandwidthBench b =
      fx::run_bandwidth_bench({o.bandwidth_mb, o.threads, o.bench, o.reps});
  if (o.json) {
    nlohmann::json j = {{"mib", o.bandwidth_mb}, {"floats", sh.n},
                        {"threads", b.threads},  {"runs_per_repetition", b.runs},
                        {"repetitions", b.reps}, {"reference", "stream-copy"},
                        {"target", b.target},    {"kernels", nlohmann::json::array()}};
    for (const auto& r : b.rows)
      j["kernels"].push_back({{"id", r.id},
                              {"gbs", r.gbs},
                              {"ratio", r.ratio},
                              {"best_gbs", r.best_gbs},
                              {"median_gbs", r.median_gbs},
                              {"ratio_min", r.ratio_min},
                              {"ratio_median", r.ratio_median},
                              {"best_vs_best", r.best_vs_best},
                              {"meets_target", r.meets_target}});
    fmt::print("{}\n", j.dump(1));
    return 0;
  }
  const double mib = double(sh.n) * 4 / 1048576;
  fmt::print(
      "tensors of {} floats ({:.4g} MiB), {} threads; {} repetitions of {} runs per kernel, "
      "kernels taking turns run by run\n"
      "bytes = input read once + output written once, the copy's too (it reads {:.4g} MiB and "
      "writes {:.4g} MiB, streaming stores); GB/s per repetition = bytes / median run; ratio per "
      "repetition = median over its rounds of kernel GB/s / copy GB/s of the same round; best = "
      "fastest single run\n",
      sh.n, mib, b.threads, b.reps, b.runs, mib, mib);
  fmt::print("{:<12} {:>9} {:>9}  {:>7} {:>7} {:>9}  {}\n", "kernel", "best GB/s", "med GB/s",
             "med %", "min %", "best/best", "% of the same repetition's copy");
  for (const auto& r : b.rows) {
    std::string per;
    for (double x : r.ratio) per += fmt::format(" {:5.1f}", 100 * x);
    fmt::print("{:<12} {:9.2f} {:9.2f}  {:6.1f}% {:6.1f}% {:8.1f}%  {}{}\n", r.id, r.best_gbs,
               r.median_gbs, 100 * r.ratio_median, 100 * r.ratio_min, 100 * r.best_vs_best, per,
               r.id == "stream-copy" ? ""
               : r.meets_target      ? "  meets 80%"
                                     : "  below 80%");
  }
  return 0;
}

void print_op_times(const fx::OpTimes& t, const char* label) {
  fmt::print("{}: median run {:.3f} ms, of which inside steps {:.3f} ms\n", label, t.median_run_ms,
             t.median_inside_ms);
  double total = 0;
  for (const auto& row : t.by_op) total += row.first;
  fmt::print("{} steps by op type (median ms per run, sum {:.3f}):\n", label, total);
  for (std::size_t i = 0; i < t.by_op.size() && i < 15; ++i)
    fmt::print("  {:8.3f}  {}\n", t.by_op[i].first, t.by_op[i].second);
}

nlohmann::json times_json(const fx::RunTimes& t, bool steps) {
  nlohmann::json j = {{"median_ms", t.median_ms}, {"min_ms", t.min_ms}};
  if (steps) j["steps"] = t.steps;
  return j;
}

nlohmann::json autotune_json(const AutotuneUse& u) {
  nlohmann::json j = {{"enabled", u.enabled}};
  if (!u.enabled) return j;
  j.update({{"path", u.path},
            {"entries", u.entries},
            {"consulted", u.consulted},
            {"rejected", u.rejected}});
  if (!u.error.empty()) j["error"] = u.error;
  return j;
}

// Groups the autotune cache has a verdict for (one that tells, with a margin): they
// are not timed again at warm-up.
std::function<bool(const fx::GroupBuild&)> decided_by_cache(
    const fx::Graph& graph, const std::vector<const fx::FusionGroup*>& accepted,
    const AutotuneUse& autotune, int threads) {
  if (!autotune.enabled || !autotune.error.empty() || autotune.entries == 0) return {};
  auto cache = std::make_shared<fx::AutotuneCache>(fx::AutotuneCache::open(autotune.path));
  std::map<std::string, std::string> signatures;
  for (const fx::FusionGroup* g : accepted)
    signatures[g->id] = fx::group_signature(graph, *g, resolved_threads(threads));
  return [cache, signatures](const fx::GroupBuild& b) {
    auto it = signatures.find(b.id);
    if (it == signatures.end()) return false;
    const fx::AutotuneEntry* e = cache->find(it->second);
    return e && !std::isnan(e->margin_us());
  };
}

nlohmann::json choice_json(const fx::WarmupChoice& c) {
  nlohmann::json fell = nlohmann::json::array();
  for (const auto& f : c.fell_back)
    fell.push_back({{"id", f.id},
                    {"pattern", f.pattern},
                    {"fused_us", f.fused_us},
                    {"unfused_us", f.unfused_us},
                    {"noise_us", f.noise_us},
                    {"reason", f.line()}});
  return {{"timed", c.timed}, {"decided_by_cache", c.decided}, {"fell_back", fell}};
}

int run_bench(const CodegenCmd& o, const fx::Graph& graph, int64_t opset,
              const std::vector<const fx::FusionGroup*>& accepted, const AutotuneUse& autotune) {
  fx::CodegenBenchOptions bo;
  bo.opset = opset;
  bo.runs = o.bench;
  bo.threads = o.threads;
  bo.stem = std::filesystem::path(o.model).stem().string();
  bo.alone = o.json && !o.interleaved_only;
  bo.evict_mb = o.evict_mb;
  bo.op_times = o.steps;
  if (!o.inputs_dir.empty()) bo.inputs = read_inputs(o.inputs_dir, graph);
  bo.warmup_choice = !o.keep_slower;
  if (const char* f = std::getenv("FXC_TEST_BREAK_GROUP"); f && *f)
    bo.fault = fx::parse_fault_spec(f);
  bo.decided = decided_by_cache(graph, accepted, autotune, o.threads);
  const fx::CodegenBench b = fx::run_codegen_bench(graph, accepted, bo);
  if (!o.outputs_dir.empty()) {
    std::filesystem::create_directories(o.outputs_dir);
    for (std::size_t i = 0; i < b.fused_outputs.size(); ++i)
      fx::write_tensor_file(fmt::format("{}/output_{}.pb", o.outputs_dir, i),
                            *b.fused_outputs[i].to_tensor_data(),
                            graph.value(graph.outputs()[i]).name);
  }
  const fx::FusedProgram& p = b.program;
  const fx::TensorDiff& agree = b.outputs;
  const fx::Tolerance& tol = b.tolerance;
  if (o.steps) {
    for (const auto& gb : p.groups)
      fmt::print("group {} {} [{}]: {}\n", gb.id, gb.pattern, fx::group_outcome_name(gb.outcome),
                 gb.detail);
    print_op_times(b.unfused_ops, "unfused");
    print_op_times(b.fused_ops, "fused");
  }
  if (o.json) {
    nlohmann::json cold = times_json(b.fused_cold, false);
    cold["evict_mb"] = o.evict_mb;
    nlohmann::json j = {
        {"model", o.model},
        {"threads", b.threads},
        {"runs", o.bench},
        {"groups", p.groups.size()},
        {"outcomes",
         {{"dnnl_post_ops", p.count(fx::GroupOutcome::DnnlPostOps)},
          {"compiled", p.count(fx::GroupOutcome::Compiled)},
          {"runtime", p.count(fx::GroupOutcome::Runtime)},
          {"excluded", p.count(fx::GroupOutcome::Excluded)}}},
        {"unfused", times_json(b.unfused, true)},
        {"fused", times_json(b.fused, true)},
        {"fused_alone", times_json(b.fused_alone, false)},
        {"fused_cold", cold},
        {"speedup", b.speedup()},
        {"same_program", b.same_program},
        {"peak_activation_bytes",
         {{"unfused", b.unfused_peak_bytes}, {"fused", b.fused_peak_bytes}}},
        {"max_abs_error", agree.max_abs_error},
        {"max_rel_error", agree.max_rel_error},
        {"max_abs_output", agree.max_abs_expected},
        {"equivalent", agree.match},
        {"mismatch", agree.where},
        {"tolerance", {{"rtol", tol.rtol}, {"atol", tol.atol}, {"mode", tol.mode()}}},
        {"note", p.note},
        {"autotune_cache", autotune_json(autotune)},
        {"warmup_choice", choice_json(b.choice)}};
    fmt::print("{}\n", j.dump(1));
    return agree.match ? 0 : 3;
  }
  fmt::print("{}: {} groups ({} dnnl_post_ops, {} compiled, {} runtime, {} excluded), {} threads\n",
             o.model, p.groups.size(), p.count(fx::GroupOutcome::DnnlPostOps),
             p.count(fx::GroupOutcome::Compiled), p.count(fx::GroupOutcome::Runtime),
             p.count(fx::GroupOutcome::Excluded), b.threads);
  fmt::print(
      "unfused {} steps median {:.3f} ms (min {:.3f}); fused {} steps median {:.3f} ms (min "
      "{:.3f}); speedup {:.2f}x\n",
      b.unfused.steps, b.unfused.median_ms, b.unfused.min_ms, b.fused.steps, b.fused.median_ms,
      b.fused.min_ms, b.speedup());
  fmt::print(
      "outputs {} (max abs error {:.3g}, max rel error {:.3g}, max |output| {:.3g}; rtol {:g}, "
      "atol {:g} {})\n",
      agree.match ? "agree" : "DISAGREE", agree.max_abs_error, agree.max_rel_error,
      agree.max_abs_expected, tol.rtol, tol.atol, tol.mode());
  if (!agree.match) fmt::print("mismatch: {}\n", agree.where);
  if (!p.note.empty()) fmt::print("note: {}\n", p.note);
  if (!o.keep_slower)
    fmt::print("warm-up choice: {} group(s) timed, {} fell back\n", b.choice.timed,
               b.choice.fell_back.size());
  for (const auto& f : b.choice.fell_back) fmt::print("{}\n", f.line());
  return agree.match ? 0 : 3;
}

int run_codegen(const CodegenCmd& o) {
  if (o.bandwidth_mb > 0) return run_bandwidth(o);
  if (o.model.empty()) throw fx::Error("MODEL is required");
  fx::LoadedModel m = load_model(o.model, with_plan_passes(o.mo, o.plan));
  print_model_header(m, stderr);
  PlanChoice choice{o.plan, o.opt_level, o.threshold, o.device, o.model};
  choice.threads = o.threads;
  AutotuneUse autotune;
  fx::FusionPlan plan = plan_for(choice, m.graph, &autotune);
  if (autotune.rejected > 0)
    fmt::print(stderr, "fxc: autotune cache {}: {} group(s) measured slower on this CPU left out\n",
               autotune.path, autotune.rejected);
  auto accepted = plan.accepted();
  if (!o.group.empty()) {
    const fx::FusionGroup* g = plan.find(o.group);
    if (!g) throw fx::Error("no group " + o.group + " in the plan");
    accepted = {g};
  }
  if (!o.cuda_out.empty()) {
    // All groups (and generated parts) as one CUDA translation unit, for nvcc.
    fx::CodegenOptions co;
    co.compile = false;
    co.emit_cuda = true;
    fx::FusedProgram p = fx::build_fused_program(m.graph, accepted, co);
    std::ofstream f(o.cuda_out);
    f << p.cuda_source;
    if (!f) throw fx::FileError(o.cuda_out, "cannot write");
    // With compile off, the groups that were generated say so in their detail.
    auto n = std::count_if(p.groups.begin(), p.groups.end(), [](const fx::GroupBuild& b) {
      return b.detail.find("compilation disabled") != std::string::npos;
    });
    fmt::print("{}: CUDA for {} generated group(s)\n", o.cuda_out, n);
    return 0;
  }
  if (o.bench > 0) return run_bench(o, m.graph, default_opset(m.info), accepted, autotune);
  if (!o.out_dir.empty()) std::filesystem::create_directories(o.out_dir);
  for (const fx::FusionGroup* g : accepted) {
    std::string src = fx::generate_group_source(m.graph, *g);
    if (o.out_dir.empty()) {
      fmt::print("{}\n", src);
      continue;
    }
    std::string path = o.out_dir + "/" + g->id + ".cc";
    std::ofstream f(path);
    f << src;
    if (!f) throw fx::FileError(path, "cannot write");
    fmt::print("{}  {}\n", path, g->pattern);
  }
  if (accepted.empty()) fmt::print(stderr, "fxc: the plan accepts no group\n");
  return 0;
}

}  // namespace

void register_codegen(CLI::App& app, Runner& run) {
  auto o = std::make_shared<CodegenCmd>();
  auto* cmd =
      app.add_subcommand("codegen", "Generate the fused kernels of a plan's accepted groups");
  cmd->add_option("model", o->model, "ONNX model");
  cmd->add_option("--plan", o->plan, "Fusion plan JSON (fxc analyze --plan-out)");
  cmd->add_option("--opt-level", o->opt_level,
                  "Analyze at this level and accept every group above --threshold");
  cmd->add_option("--threshold", o->threshold,
                  "Traffic reduction a group needs (with --opt-level)");
  cmd->add_option("--device", o->device, "Device profile for the analysis");
  add_model_options(cmd, o->mo);
  cmd->add_option("--out", o->out_dir, "Write one <group>.cc per group here instead of printing");
  cmd->add_option("--group", o->group, "Only this group id");
  cmd->add_option("--bench", o->bench, "Time N runs unfused and fused in our runtime (median)");
  cmd->add_option("--inputs", o->inputs_dir,
                  "With --bench: read the inputs from DIR/input_<i>.pb (default: generated)");
  cmd->add_option("--outputs", o->outputs_dir,
                  "With --bench: write the fused program's outputs as DIR/output_<i>.pb");
  cmd->add_flag("--interleaved-only", o->interleaved_only,
                "With --bench --json: only the interleaved unfused/fused runs (no alone, cold)");
  cmd->add_flag("--keep-slower-groups", o->keep_slower,
                "With --bench: keep groups measured slower fused at warm-up (by default they "
                "fall back to their unfused steps)");
  cmd->add_option("--cuda-out", o->cuda_out,
                  "Write the generated groups as one CUDA source file (for nvcc) and stop");
  cmd->add_flag("--json", o->json,
                "With --bench: one JSON object (times, speed-up, errors); with --bandwidth: GB/s "
                "and ratios per repetition");
  cmd->add_flag("--steps", o->steps, "With --bench: time per op type, unfused and fused");
  cmd->add_option("--threads", o->threads, "Intra-op threads for --bench/--bandwidth (0: all)");
  cmd->add_option("--evict-mb", o->evict_mb,
                  "With --bench --json: also time the fused program cold, each run after a "
                  "read-modify-write walk over this many MiB (default 64; 0: skip)");
  cmd->add_option("--reps", o->reps,
                  "With --bandwidth: repetitions of --bench runs per kernel (default 5)");
  cmd->add_option("--bandwidth", o->bandwidth_mb,
                  "Measure generated memory-bound kernels (chain, LayerNorm, Softmax) against a "
                  "generated stream copy on tensors of this many MiB (no model); with --cuda-out, "
                  "write them as CUDA instead (bench/gpu/bandwidth.cu runs them)");
  cmd->footer(
      "Examples:\n"
      "  fxc codegen resources/models/tiny_cnn.onnx --opt-level 2   # print the kernels\n"
      "  fxc codegen gpt2.onnx --dim batch=1 --dim seq=128 --plan plan.json --out kernels/\n"
      "  fxc codegen resnet18.onnx --opt-level 2 --bench 20\n"
      "  fxc codegen --bandwidth 256 --bench 20");
  cmd->callback([o, &run] { run = [o] { return run_codegen(*o); }; });
}

}  // namespace fxc
