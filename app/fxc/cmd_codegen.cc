// fxc codegen: print or write the generated kernels of a plan's groups; with --bench,
// time the model unfused and fused in our runtime; with --bandwidth, compare a
// generated elementwise chain with a generated stream copy on a large tensor.
// Wiring only: core/codegen does the work.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "calibration/host_device.h"
#include "codegen/fused_program.h"
#include "commands.h"
#include "ir/graph_builder.h"
#include "onnx/model_loader.h"
#include "profile/bandwidth_summary.h"
#include "profile/cache_evictor.h"
#include "profile/equivalence.h"
#include "util/error.h"

namespace fxc {
namespace {

struct CodegenCmd {
  std::string model, plan, out_dir, group, device = "cpu-host";
  int opt_level = -1;
  double threshold = 0.30;
  std::vector<std::string> dims;
  int bench = 0;
  int threads = 0;
  double bandwidth_mb = 0;
  int reps = 5;
  double evict_mb = 64;
  bool steps = false;
  bool json = false;
  std::string cuda_out;
};

fx::FusionPlan plan_for(const CodegenCmd& o, const fx::Graph& g) {
  if (!o.plan.empty()) {
    fx::FusionPlan p = fx::FusionPlan::load(o.plan);
    auto missing = p.bind(g);
    for (const auto& m : missing)
      fmt::print(stderr, "fxc: plan node '{}' is not in the model\n", m);
    return p;
  }
  if (o.opt_level < 0) throw fx::Error("give --plan PLAN or --opt-level N");
  fx::FusionOptions fo;
  fo.opt_level = o.opt_level;
  fo.threshold = o.threshold;
  fx::FusionPlan p(fx::analyze_fusion(g, fx::resolve_device(o.device), fo), o.model);
  p.accept_all_above(o.threshold);
  return p;
}

double time_ms(fx::Executor& ex, const std::map<std::string, fx::Tensor>& in) {
  auto s = std::chrono::steady_clock::now();
  ex.run(in);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[t.size() / 2];
}

// Per op type: the median over runs of the summed time of its steps (--steps).
void print_op_times(fx::Executor& ex, const std::map<std::string, fx::Tensor>& in, int runs,
                    const char* label) {
  int run = 0;
  std::map<std::string, std::vector<double>> ns;
  ex.set_step_observer([&](const fx::StepEvent& e) {
    auto& v = ns[ex.steps()[static_cast<std::size_t>(e.step)].op_type];
    v.resize(static_cast<std::size_t>(runs));
    v[static_cast<std::size_t>(run)] += double(e.end_ns - e.start_ns);
  });
  std::vector<double> wall, inside(static_cast<std::size_t>(runs));
  for (run = 0; run < runs; ++run) wall.push_back(time_ms(ex, in));
  ex.set_step_observer({});
  for (auto& [op, t] : ns)
    for (int r = 0; r < runs; ++r)
      inside[static_cast<std::size_t>(r)] += t[static_cast<std::size_t>(r)] / 1e6;
  fmt::print("{}: median run {:.3f} ms, of which inside steps {:.3f} ms\n", label, median(wall),
             median(inside));
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (auto& [op, t] : ns) {
    std::sort(t.begin(), t.end());
    rows.push_back({t[t.size() / 2] / 1e6, op});
    total += rows.back().first;
  }
  std::sort(rows.rbegin(), rows.rend());
  fmt::print("{} steps by op type (median ms per run, sum {:.3f}):\n", label, total);
  for (std::size_t i = 0; i < rows.size() && i < 15; ++i)
    fmt::print("  {:8.3f}  {}\n", rows[i].first, rows[i].second);
}

// Fused against unfused outputs: |a - b| <= atol + rtol * |b| everywhere (float32;
// other dtypes must match exactly).
std::map<std::string, fx::Tensor> inputs_for(const fx::Graph& g) {
  std::map<std::string, fx::Tensor> m;
  uint64_t state = 12345;
  for (fx::ValueId v : g.runtime_inputs()) {
    const auto& val = g.value(v);
    if (!val.shape.is_static())
      throw fx::Error("input '" + val.name + "' has symbolic dims; bind them with --dim");
    auto dims = val.shape.static_dims();
    fx::Tensor t(val.dtype, dims);
    for (int64_t i = 0; i < t.numel(); ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      if (val.dtype == fx::DType::Float32)
        t.data<float>()[i] = float((state >> 40) % 2000) / 1000.f - 1.f;
      else if (val.dtype == fx::DType::Int64)
        t.data<int64_t>()[i] = int64_t((state >> 40) % 8);
      else
        throw fx::Error("input '" + val.name + "': only float32/int64 inputs are generated");
    }
    m[val.name] = t;
  }
  return m;
}

// The graph of the --bandwidth kernels: x [n] -> stream copy and an elementwise chain;
// m [rows, cols] -> LayerNormalization and Softmax. `only` keeps one of them ("" all).
fx::Graph bandwidth_graph(int64_t n, int64_t rows, int64_t cols, const std::string& only,
                          bool timed = false) {
  auto want = [&](const char* id) { return only.empty() || only == id; };
  fx::GraphBuilder b;
  const bool on_x = want("stream-copy") || want("chain"),
             on_m = want("layernorm") || want("softmax");
  fx::ValueId x = on_x ? b.input("x", {n}) : fx::kNoValue;
  fx::ValueId m = on_m ? b.input("m", {rows, cols}) : fx::kNoValue;
  auto c = [&](const char* name, float v) {
    return b.constant(name, fx::TensorData::from_floats({}, {v}));
  };
  // Timed: each kernel's output feeds a Shape node, the graph output. A graph output is
  // cloned at the end of every run (the executor hands back copies): 64 MiB read and
  // written into fresh pages, whose dirty lines (up to the 32 MiB L3) the next
  // kernel's run then wrote back as if they were its own traffic, a quarter more at 64
  // MiB. As an intermediate the output stays in the executor's reused arena buffer.
  auto out = [&](fx::ValueId v, const std::string& name) {
    if (!timed) return b.output(v);
    b.output(b.op("Shape", {v}, {}, name + "_shape",
                  fx::Shape::of({static_cast<int64_t>(b.graph().value(v).shape.rank())}),
                  fx::DType::Int64));
  };
  if (want("stream-copy")) out(b.op("Identity", {x}, {}, "copy"), "copy");
  if (want("chain")) {
    auto y = b.op("Mul", {x, c("a", 1.5f)}, {}, "scale");
    y = b.op("Add", {y, c("b", 0.25f)}, {}, "shift");
    y = b.op("Sigmoid", {y}, {}, "sig");
    out(b.op("Mul", {y, x}, {}, "gate"), "gate");
  }
  if (want("layernorm")) {
    std::vector<float> ones(static_cast<std::size_t>(cols), 1.f), zeros(ones.size(), 0.f);
    auto g1 = b.constant("ln_scale", fx::TensorData::from_floats({cols}, ones));
    auto b0 = b.constant("ln_bias", fx::TensorData::from_floats({cols}, zeros));
    out(b.op("LayerNormalization", {m, g1, b0}, {{"axis", int64_t{-1}}}, "layernorm"), "layernorm");
  }
  if (want("softmax")) out(b.op("Softmax", {m}, {{"axis", int64_t{-1}}}, "softmax"), "softmax");
  return b.build();
}

int run_bandwidth(const CodegenCmd& o) {
  const int64_t n = static_cast<int64_t>(o.bandwidth_mb * 1024 * 1024 / 4);
  const int64_t cols = 1024, rows = std::max<int64_t>(1, n / cols);
  fx::Graph g = bandwidth_graph(n, rows, cols, "");
  // kernel id, its node, floats read + written per element of its tensor
  const std::vector<std::tuple<std::string, std::string, int64_t>> kernels{
      {"stream-copy", "copy", n},
      {"chain", "scale,shift,sig,gate", n},
      {"layernorm", "layernorm", rows * cols},
      {"softmax", "softmax", rows * cols}};
  std::vector<fx::FusionGroup> groups;
  for (const auto& [id, nodes, _] : kernels) {
    fx::FusionGroup fg;
    fg.id = id;
    for (std::size_t p = 0, q; p <= nodes.size(); p = q + 1) {
      q = nodes.find(',', p);
      if (q == std::string::npos) q = nodes.size();
      fg.nodes.push_back(nodes.substr(p, q - p));
    }
    groups.push_back(fg);
  }
  std::vector<const fx::FusionGroup*> ptrs;
  for (const auto& fg : groups) ptrs.push_back(&fg);
  if (!o.cuda_out.empty()) {
    // The same four kernels as CUDA, for bench/gpu/bandwidth.cu (entry points
    // fx_stream_copy_cuda, fx_chain_cuda(x), fx_layernorm_cuda(m, scale, bias),
    // fx_softmax_cuda(m)).
    fx::CodegenOptions co;
    co.compile = false;
    co.emit_cuda = true;
    fx::FusedProgram cp = fx::build_fused_program(g, ptrs, co);
    if (cp.cuda_source.rfind("// CUDA emission failed", 0) == 0)
      throw fx::Error(cp.cuda_source.substr(3, cp.cuda_source.size() - 4));
    std::ofstream f(o.cuda_out);
    f << cp.cuda_source;
    if (!f) throw fx::FileError(o.cuda_out, "cannot write");
    fmt::print("{}: CUDA for stream-copy, chain (x [{}]), layernorm and softmax (m [{}, {}])\n",
               o.cuda_out, n, rows, cols);
    return 0;
  }
  // Each kernel alone in its own graph and executor, the kernels taking turns run by
  // run (the first in a round rotates): every kernel is timed in the same state (the
  // previous run's output clone just written, its threads just woken), the copy too.
  struct Timed {
    std::string id;
    int64_t elems = 0;
    fx::Graph graph;
    fx::FusedProgram program;
    std::unique_ptr<fx::Executor> ex;
    std::map<std::string, fx::Tensor> in;
    std::vector<double> ns;
  };
  std::vector<std::unique_ptr<Timed>> timed;
  fx::ExecutorOptions eo;
  eo.threads = o.threads;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    auto t = std::make_unique<Timed>();
    t->id = std::get<0>(kernels[k]);
    t->elems = std::get<2>(kernels[k]);
    t->graph = bandwidth_graph(n, rows, cols, t->id, true);
    t->program = fx::build_fused_program(t->graph, {&groups[k]}, {});
    for (const auto& gb : t->program.groups)
      if (gb.outcome != fx::GroupOutcome::Compiled)
        throw fx::Error(gb.id + " not compiled: " + gb.detail);
    t->ex = std::make_unique<fx::Executor>(t->graph, t->program.steps, eo);
    Timed* tp = t.get();
    t->ex->set_step_observer([tp](const fx::StepEvent& e) {
      if (tp->ex->steps()[static_cast<std::size_t>(e.step)].name == tp->id)
        tp->ns.push_back(double(e.end_ns - e.start_ns));
    });
    t->in = inputs_for(t->graph);
    t->ex->run(t->in);  // warm-up: first touch of the outputs
    t->ns.clear();
    timed.push_back(std::move(t));
  }
  // Repetitions of `runs` rounds; in a round every kernel runs once, the first of the
  // round rotating, so that a kernel's run and the copy's run of the same round are
  // milliseconds apart and see the same memory. Each run is compared with the copy run
  // of its round; the verdict is the median over repetitions of each repetition's
  // median paired ratio, so that a copy slowed (or sped up) by another tenant in some
  // runs does not decide it (profile/bandwidth_summary.h).
  const int runs = std::max(5, o.bench), reps = std::max(1, o.reps);
  std::vector<fx::BandwidthSample> samples(timed.size());
  for (std::size_t k = 0; k < timed.size(); ++k) {
    samples[k].id = timed[k]->id;
    samples[k].bytes = 2.0 * double(timed[k]->elems) * 4;  // read once + written once
    timed[k]->ns.clear();
  }
  for (int round = 0; round < reps * runs; ++round)
    for (std::size_t k = 0; k < timed.size(); ++k) {
      Timed& t = *timed[(k + static_cast<std::size_t>(round)) % timed.size()];
      t.ex->run(t.in);
    }
  for (std::size_t k = 0; k < timed.size(); ++k) samples[k].ns = timed[k]->ns;
  const double target = 0.80;
  const auto summary = fx::summarize_bandwidth(samples, "stream-copy", target, runs);
  if (o.json) {
    nlohmann::json j = {{"mib", o.bandwidth_mb},
                        {"floats", n},
                        {"threads", timed[0]->ex->threads()},
                        {"runs_per_repetition", runs},
                        {"repetitions", reps},
                        {"reference", "stream-copy"},
                        {"target", target},
                        {"kernels", nlohmann::json::array()}};
    for (const auto& r : summary)
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
  fmt::print(
      "tensors of {} floats ({:.4g} MiB), {} threads; {} repetitions of {} runs per kernel, "
      "kernels taking turns run by run\n"
      "bytes = input read once + output written once, the copy's too (it reads {:.4g} MiB and "
      "writes {:.4g} MiB, streaming stores); GB/s per repetition = bytes / median run; ratio per "
      "repetition = median over its rounds of kernel GB/s / copy GB/s of the same round; best = "
      "fastest single run\n",
      n, double(n) * 4 / 1048576, timed[0]->ex->threads(), reps, runs, double(n) * 4 / 1048576,
      double(n) * 4 / 1048576);
  fmt::print("{:<12} {:>9} {:>9}  {:>7} {:>7} {:>9}  {}\n", "kernel", "best GB/s", "med GB/s",
             "med %", "min %", "best/best", "% of the same repetition's copy");
  for (const auto& r : summary) {
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

int run_codegen(const CodegenCmd& o) {
  if (o.bandwidth_mb > 0) return run_bandwidth(o);
  if (o.model.empty()) throw fx::Error("MODEL is required");
  fx::LoadOptions lo;
  for (const auto& d : o.dims) fx::parse_dim_binding(d, lo);
  fx::LoadedModel m = fx::load_onnx(o.model, lo);
  fx::FusionPlan plan = plan_for(o, m.graph);
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
  if (o.bench > 0) {
    fx::CodegenOptions co;
    co.stem = std::filesystem::path(o.model).stem().string();
    co.threads = o.threads;
    fx::FusedProgram p = fx::build_fused_program(m.graph, accepted, co);
    fx::ExecutorOptions eo;
    eo.threads = o.threads;
    auto in = inputs_for(m.graph);
    fx::Executor before(m.graph, eo), after(m.graph, p.steps, eo);
    // Interleaved (one unfused run, one fused run, ...) so that load changes on a
    // shared machine hit both alike. The warm-up runs give the outputs compared.
    // The same check as fxc profile's (profile/equivalence.h, scaled tolerance).
    std::vector<std::string> names;
    for (fx::ValueId v : m.graph.outputs()) names.push_back(m.graph.value(v).name);
    const fx::Tolerance tol;
    const fx::TensorDiff agree = fx::compare_outputs(before.run(in), after.run(in), names, tol);
    std::vector<double> tb, ta;
    for (int i = 0; i < o.bench; ++i) {
      tb.push_back(time_ms(before, in));
      ta.push_back(time_ms(after, in));
    }
    const double b = median(tb), a = median(ta);
    // Then the fused program alone, run after run, as ONNX Runtime is timed: the
    // interleaved unfused runs evict the fused program's weights from the last-level
    // cache (a ResNet's weights are about its size), which runs alone do not.
    std::vector<double> alone;
    if (o.json) {
      after.run(in);
      for (int i = 0; i < o.bench; ++i) alone.push_back(time_ms(after, in));
    }
    // And cold: each run after a walk over a buffer larger than the last-level cache, as
    // ort_run.js --cold-runs times ONNX Runtime; both cold is the like-for-like
    // counterpart of the interleaved figure.
    std::vector<double> cold;
    if (o.json && o.evict_mb > 0) {
      fx::CacheEvictor evictor(static_cast<std::size_t>(o.evict_mb * 1048576.0));
      for (int i = 0; i < o.bench; ++i) {
        evictor.evict();
        cold.push_back(time_ms(after, in));
      }
    }
    if (o.steps) {
      for (const auto& gb : p.groups)
        fmt::print("group {} {} [{}]: {}\n", gb.id, gb.pattern, fx::group_outcome_name(gb.outcome),
                   gb.detail);
      print_op_times(before, in, o.bench, "unfused");
      print_op_times(after, in, o.bench, "fused");
    }
    if (o.json) {
      nlohmann::json j = {
          {"model", o.model},
          {"threads", before.threads()},
          {"runs", o.bench},
          {"groups", p.groups.size()},
          {"outcomes",
           {{"dnnl_post_ops", p.count(fx::GroupOutcome::DnnlPostOps)},
            {"compiled", p.count(fx::GroupOutcome::Compiled)},
            {"runtime", p.count(fx::GroupOutcome::Runtime)},
            {"excluded", p.count(fx::GroupOutcome::Excluded)}}},
          {"unfused",
           {{"steps", before.steps().size()},
            {"median_ms", b},
            {"min_ms", *std::min_element(tb.begin(), tb.end())}}},
          {"fused",
           {{"steps", after.steps().size()},
            {"median_ms", a},
            {"min_ms", *std::min_element(ta.begin(), ta.end())}}},
          {"fused_alone",
           {{"median_ms", alone.empty() ? 0.0 : median(alone)},
            {"min_ms", alone.empty() ? 0.0 : *std::min_element(alone.begin(), alone.end())}}},
          {"fused_cold",
           {{"median_ms", cold.empty() ? 0.0 : median(cold)},
            {"min_ms", cold.empty() ? 0.0 : *std::min_element(cold.begin(), cold.end())},
            {"evict_mb", o.evict_mb}}},
          {"speedup", b / a},
          {"max_abs_error", agree.max_abs_error},
          {"max_rel_error", agree.max_rel_error},
          {"max_abs_output", agree.max_abs_expected},
          {"equivalent", agree.match},
          {"mismatch", agree.where},
          {"tolerance", {{"rtol", tol.rtol}, {"atol", tol.atol}, {"mode", tol.mode()}}},
          {"note", p.note}};
      fmt::print("{}\n", j.dump(1));
      return agree.match ? 0 : 3;
    }
    fmt::print(
        "{}: {} groups ({} dnnl_post_ops, {} compiled, {} runtime, {} excluded), {} threads\n",
        o.model, p.groups.size(), p.count(fx::GroupOutcome::DnnlPostOps),
        p.count(fx::GroupOutcome::Compiled), p.count(fx::GroupOutcome::Runtime),
        p.count(fx::GroupOutcome::Excluded), before.threads());
    fmt::print(
        "unfused {} steps median {:.3f} ms (min {:.3f}); fused {} steps median {:.3f} ms (min "
        "{:.3f}); speedup {:.2f}x\n",
        before.steps().size(), b, *std::min_element(tb.begin(), tb.end()), after.steps().size(), a,
        *std::min_element(ta.begin(), ta.end()), b / a);
    fmt::print(
        "outputs {} (max abs error {:.3g}, max rel error {:.3g}, max |output| {:.3g}; rtol {:g}, "
        "atol {:g} {})\n",
        agree.match ? "agree" : "DISAGREE", agree.max_abs_error, agree.max_rel_error,
        agree.max_abs_expected, tol.rtol, tol.atol, tol.mode());
    if (!agree.match) fmt::print("mismatch: {}\n", agree.where);
    if (!p.note.empty()) fmt::print("note: {}\n", p.note);
    return agree.match ? 0 : 3;
  }
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
  cmd->add_option("--dim", o->dims, "Bind a symbolic dim, NAME=N (repeatable)");
  cmd->add_option("--out", o->out_dir, "Write one <group>.cc per group here instead of printing");
  cmd->add_option("--group", o->group, "Only this group id");
  cmd->add_option("--bench", o->bench, "Time N runs unfused and fused in our runtime (median)");
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
