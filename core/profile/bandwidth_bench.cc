// SPDX-License-Identifier: Apache-2.0
#include "profile/bandwidth_bench.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "codegen/fused_program.h"
#include "ir/graph_builder.h"
#include "profile/codegen_bench.h"
#include "runtime/executor.h"
#include "util/error.h"

namespace fx {
namespace {

// The graph of the kernels: x [n] -> stream copy and an elementwise chain; m [rows, cols]
// -> LayerNormalization and Softmax. `only` keeps one of them ("" all).
Graph bandwidth_graph(const BandwidthShapes& s, const std::string& only, bool timed = false) {
  auto want = [&](const char* id) { return only.empty() || only == id; };
  GraphBuilder b;
  const bool on_x = want("stream-copy") || want("chain"),
             on_m = want("layernorm") || want("softmax");
  ValueId x = on_x ? b.input("x", {s.n}) : kNoValue;
  ValueId m = on_m ? b.input("m", {s.rows, s.cols}) : kNoValue;
  auto c = [&](const char* name, float v) {
    return b.constant(name, TensorData::from_floats({}, {v}));
  };
  // Timed: each kernel's output feeds a Shape node, the graph output. A graph output is
  // cloned at the end of every run (the executor hands back copies): 64 MiB read and
  // written into fresh pages, whose dirty lines (up to the 32 MiB L3) the next
  // kernel's run then wrote back as if they were its own traffic, a quarter more at 64
  // MiB. As an intermediate the output stays in the executor's reused arena buffer.
  auto out = [&](ValueId v, const std::string& name) {
    if (!timed) return b.output(v);
    b.output(b.op("Shape", {v}, {}, name + "_shape",
                  Shape::of({static_cast<int64_t>(b.graph().value(v).shape.rank())}),
                  DType::Int64));
  };
  if (want("stream-copy")) out(b.op("Identity", {x}, {}, "copy"), "copy");
  if (want("chain")) {
    auto y = b.op("Mul", {x, c("a", 1.5f)}, {}, "scale");
    y = b.op("Add", {y, c("b", 0.25f)}, {}, "shift");
    y = b.op("Sigmoid", {y}, {}, "sig");
    out(b.op("Mul", {y, x}, {}, "gate"), "gate");
  }
  if (want("layernorm")) {
    std::vector<float> ones(static_cast<std::size_t>(s.cols), 1.f), zeros(ones.size(), 0.f);
    auto g1 = b.constant("ln_scale", TensorData::from_floats({s.cols}, ones));
    auto b0 = b.constant("ln_bias", TensorData::from_floats({s.cols}, zeros));
    out(b.op("LayerNormalization", {m, g1, b0}, {{"axis", int64_t{-1}}}, "layernorm"), "layernorm");
  }
  if (want("softmax")) out(b.op("Softmax", {m}, {{"axis", int64_t{-1}}}, "softmax"), "softmax");
  return b.build();
}

// Each kernel as one group: its id and nodes, and the floats read + written per element.
struct BandwidthKernel {
  FusionGroup group;
  int64_t elems = 0;
};

std::vector<BandwidthKernel> kernels(const BandwidthShapes& s) {
  const std::vector<std::tuple<std::string, std::vector<std::string>, int64_t>> table{
      {"stream-copy", {"copy"}, s.n},
      {"chain", {"scale", "shift", "sig", "gate"}, s.n},
      {"layernorm", {"layernorm"}, s.rows * s.cols},
      {"softmax", {"softmax"}, s.rows * s.cols}};
  std::vector<BandwidthKernel> out;
  for (const auto& [id, nodes, elems] : table) {
    BandwidthKernel k;
    k.group.id = id;
    k.group.nodes = nodes;
    k.elems = elems;
    out.push_back(std::move(k));
  }
  return out;
}

// One kernel alone in its own graph and executor, recording its step's times.
struct Timed {
  std::string id;
  int64_t elems = 0;
  Graph graph;
  FusedProgram program;
  std::unique_ptr<Executor> ex;
  std::map<std::string, Tensor> in;
  std::vector<double> ns;
};

std::unique_ptr<Timed> timed_kernel(const BandwidthShapes& s, const BandwidthKernel& k,
                                    int threads) {
  auto t = std::make_unique<Timed>();
  t->id = k.group.id;
  t->elems = k.elems;
  t->graph = bandwidth_graph(s, t->id, true);
  t->program = build_fused_program(t->graph, {&k.group}, {});
  for (const auto& gb : t->program.groups)
    if (gb.outcome != GroupOutcome::Compiled) throw Error(gb.id + " not compiled: " + gb.detail);
  ExecutorOptions eo;
  eo.threads = threads;
  t->ex = std::make_unique<Executor>(t->graph, t->program.steps, eo);
  Timed* tp = t.get();
  t->ex->set_step_observer([tp](const StepEvent& e) {
    if (tp->ex->steps()[static_cast<std::size_t>(e.step)].name == tp->id)
      tp->ns.push_back(double(e.end_ns - e.start_ns));
  });
  t->in = bench_inputs(t->graph);
  t->ex->run(t->in);  // warm-up: first touch of the outputs
  t->ns.clear();
  return t;
}

}  // namespace

BandwidthShapes bandwidth_shapes(double mib) {
  BandwidthShapes s;
  s.n = static_cast<int64_t>(mib * 1024 * 1024 / 4);
  s.rows = std::max<int64_t>(1, s.n / s.cols);
  return s;
}

std::string bandwidth_cuda_source(double mib) {
  const BandwidthShapes s = bandwidth_shapes(mib);
  const Graph g = bandwidth_graph(s, "");
  const std::vector<BandwidthKernel> ks = kernels(s);
  std::vector<const FusionGroup*> groups;
  for (const auto& k : ks) groups.push_back(&k.group);
  CodegenOptions co;
  co.compile = false;
  co.emit_cuda = true;
  FusedProgram p = build_fused_program(g, groups, co);
  if (p.cuda_source.rfind("// CUDA emission failed", 0) == 0)
    throw Error(p.cuda_source.substr(3, p.cuda_source.size() - 4));
  return p.cuda_source;
}

BandwidthBench run_bandwidth_bench(const BandwidthBenchOptions& o) {
  BandwidthBench b;
  b.shapes = bandwidth_shapes(o.mib);
  b.runs = std::max(5, o.runs);
  b.reps = std::max(1, o.reps);
  const std::vector<BandwidthKernel> ks =
      kernels(b.shapes);  // outlive the programs built from them
  std::vector<std::unique_ptr<Timed>> timed;
  for (const BandwidthKernel& k : ks) timed.push_back(timed_kernel(b.shapes, k, o.threads));
  b.threads = timed[0]->ex->threads();
  // Repetitions of `runs` rounds; in a round every kernel runs once, the first of the
  // round rotating, so that a kernel's run and the copy's run of the same round are
  // milliseconds apart and see the same memory. Each run is compared with the copy run
  // of its round; the verdict is the median over repetitions of each repetition's
  // median paired ratio, so that a copy slowed (or sped up) by another tenant in some
  // runs does not decide it (bandwidth_summary.h).
  for (int round = 0; round < b.reps * b.runs; ++round)
    for (std::size_t k = 0; k < timed.size(); ++k) {
      Timed& t = *timed[(k + static_cast<std::size_t>(round)) % timed.size()];
      t.ex->run(t.in);
    }
  std::vector<BandwidthSample> samples;
  for (const auto& t : timed)
    samples.push_back({t->id, 2.0 * double(t->elems) * 4, t->ns});  // read + written once
  b.rows = summarize_bandwidth(samples, "stream-copy", b.target, b.runs);
  return b;
}

}  // namespace fx
