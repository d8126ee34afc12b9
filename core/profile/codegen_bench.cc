// SPDX-License-Identifier: Apache-2.0
#include "profile/codegen_bench.h"

#include <algorithm>
#include <chrono>
#include <typeinfo>

#include "profile/bandwidth_summary.h"
#include "profile/cache_evictor.h"
#include "runtime/executor.h"
#include "util/error.h"

namespace fx {
namespace {

double time_ms(Executor& ex, const std::map<std::string, Tensor>& in) {
  auto s = std::chrono::steady_clock::now();
  ex.run(in);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
}

RunTimes times_of(const Executor& ex, const std::vector<double>& ms) {
  RunTimes t;
  t.steps = ex.steps().size();
  if (ms.empty()) return t;
  t.median_ms = median_of(ms);
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  return t;
}

bool same_steps(const std::vector<Step>& a, const std::vector<Step>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Step &x = a[i], &y = b[i];
    if (x.op_type != y.op_type || x.nodes != y.nodes || x.inputs != y.inputs ||
        x.outputs != y.outputs || y.group_id.has_value() || !x.kernel || !y.kernel ||
        typeid(*x.kernel) != typeid(*y.kernel))
      return false;
  }
  return true;
}

OpTimes op_times(Executor& ex, const std::map<std::string, Tensor>& in, int runs) {
  int run = 0;
  std::map<std::string, std::vector<double>> ns;
  ex.set_step_observer([&](const StepEvent& e) {
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
  OpTimes o;
  o.median_run_ms = median_of(wall);
  o.median_inside_ms = median_of(inside);
  for (auto& [op, t] : ns) {
    std::sort(t.begin(), t.end());
    o.by_op.push_back({t[t.size() / 2] / 1e6, op});
  }
  std::sort(o.by_op.rbegin(), o.by_op.rend());
  return o;
}

}  // namespace

std::map<std::string, Tensor> bench_inputs(const Graph& g) {
  std::map<std::string, Tensor> m;
  uint64_t state = 12345;
  for (ValueId v : g.runtime_inputs()) {
    const auto& val = g.value(v);
    if (!val.shape.is_static())
      throw Error("input '" + val.name + "' has symbolic dims; bind them with --dim");
    Tensor t(val.dtype, val.shape.static_dims());
    for (int64_t i = 0; i < t.numel(); ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      if (val.dtype == DType::Float32)
        t.data<float>()[i] = float((state >> 40) % 2000) / 1000.f - 1.f;
      else if (val.dtype == DType::Int64)
        t.data<int64_t>()[i] = int64_t((state >> 40) % 8);
      else
        throw Error("input '" + val.name + "': only float32/int64 inputs are generated");
    }
    m[val.name] = t;
  }
  return m;
}

CodegenBench run_codegen_bench(const Graph& graph, const std::vector<const FusionGroup*>& groups,
                               const CodegenBenchOptions& o) {
  CodegenBench b;
  CodegenOptions co;
  co.stem = o.stem;
  co.threads = o.threads;
  co.opset = o.opset;
  b.program = build_fused_program(graph, groups, co);
  ExecutorOptions eo;
  eo.threads = o.threads;
  eo.opset = o.opset;
  const auto in = o.inputs.empty() ? bench_inputs(graph) : o.inputs;
  Executor before(graph, eo);
  if (o.fault) inject_fault(b.program, *o.fault);
  if (o.warmup_choice) {
    WarmupChoiceOptions wo;
    wo.threads = o.threads;
    wo.opset = o.opset;
    wo.decided = o.decided;
    b.choice = choose_faster_groups(graph, b.program, before, in, wo);
  }
  Executor after(graph, b.program.steps, eo);
  b.threads = before.threads();
  std::vector<std::string> names;
  for (ValueId v : graph.outputs()) names.push_back(graph.value(v).name);
  b.fused_outputs = after.run(in);
  b.outputs = compare_outputs(before.run(in), b.fused_outputs, names, b.tolerance,
                              quantization_steps(graph, graph.outputs()));
  std::vector<double> tb, ta;
  for (int i = 0; i < o.runs; ++i) {
    tb.push_back(time_ms(before, in));
    ta.push_back(time_ms(after, in));
  }
  b.unfused = times_of(before, tb);
  b.fused = times_of(after, ta);
  // Alone: the interleaved unfused runs evict the fused program's weights from the
  // last-level cache (a ResNet's weights are about its size), which runs alone do not.
  std::vector<double> alone, cold;
  if (o.alone) {
    after.run(in);
    for (int i = 0; i < o.runs; ++i) alone.push_back(time_ms(after, in));
    // Cold, as ort_run.js --cold-runs times ONNX Runtime: the like-for-like counterpart
    // of the interleaved figure.
    if (o.evict_mb > 0) {
      CacheEvictor evictor(static_cast<std::size_t>(o.evict_mb * 1048576.0));
      for (int i = 0; i < o.runs; ++i) {
        evictor.evict();
        cold.push_back(time_ms(after, in));
      }
    }
  }
  b.fused_alone = times_of(after, alone);
  b.fused_cold = times_of(after, cold);
  b.same_program = same_steps(before.steps(), after.steps());
  b.unfused_peak_bytes = before.peak_activation_bytes();
  b.fused_peak_bytes = after.peak_activation_bytes();
  if (o.op_times) {
    b.unfused_ops = op_times(before, in, o.runs);
    b.fused_ops = op_times(after, in, o.runs);
  }
  return b;
}

}  // namespace fx
