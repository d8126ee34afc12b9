// SPDX-License-Identifier: Apache-2.0
#include "profile/profiler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "profile/flop_counter.h"
#include "profile/random_inputs.h"
#include "runtime/nested_steps.h"
#include "runtime/overwrite_input.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace fx {
namespace {

// What a step does, taken once from its actual tensors.
struct StepRecord {
  bool captured = false;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t flops = 0;
  std::string input_shapes;
  std::string output_shapes;
};

// What a timed run records per step: only the clock.
struct Sample {
  int step;
  int thread;
  int64_t start_ns;
  int64_t end_ns;
};

bool views_into(const Tensor& out, const Tensor& in) {
  if (!out.raw() || !in.raw()) return false;
  auto* o = static_cast<const std::byte*>(out.raw());
  auto* i = static_cast<const std::byte*>(in.raw());
  return o >= i && o < i + std::max<std::size_t>(in.byte_size(), 1);
}

std::string shapes_text(std::span<const Tensor* const> tensors) {
  std::string s;
  for (const Tensor* t : tensors) {
    if (!s.empty()) s += ", ";
    s += t && t->defined() ? t->str() : "-";
  }
  return s;
}

DimsList dims_of(std::span<const Tensor* const> tensors) {
  DimsList d;
  for (const Tensor* t : tensors)
    d.push_back(t && t->defined() ? t->dims() : std::vector<int64_t>{});
  return d;
}

// FLOPs of a node inside a fused step, from the graph's inferred static shapes.
int64_t node_flops_from_graph(const Graph& g, const Node& n) {
  auto dims = [&](const std::vector<ValueId>& ids, DimsList& out) {
    for (ValueId id : ids) {
      if (id == kNoValue) {
        out.emplace_back();
        continue;
      }
      const Shape& s = g.value(id).shape;
      if (!s.is_static()) return false;
      out.push_back(s.static_dims());
    }
    return true;
  };
  DimsList in, out;
  if (!dims(n.inputs, in) || !dims(n.outputs, out)) return 0;
  return count_flops(n.op_type, n.attrs, in, out);
}

void capture(StepRecord& rec, const Step& step, const Graph& g, const StepEvent& e) {
  rec.captured = true;
  // An output that is a view of an input (Reshape, Squeeze, ...) moves no bytes,
  // and neither does the input it views; an input used twice is read once.
  // An output written over an input (runtime/overwrite_input.h) is no view: both
  // move their bytes.
  const bool over_input = step.kernel && overwritable_input(*step.kernel) >= 0;
  std::set<const Tensor*> viewed;
  for (const Tensor* out : e.outputs) {
    if (!out || !out->defined()) continue;
    bool is_view = false;
    for (const Tensor* in : e.inputs)
      if (in && !over_input && views_into(*out, *in)) viewed.insert(in), is_view = true;
    if (!is_view) rec.bytes_written += static_cast<int64_t>(out->byte_size());
  }
  std::set<const void*> seen;
  for (const Tensor* in : e.inputs) {
    if (!in || !in->defined() || viewed.count(in) || !seen.insert(in->raw()).second) continue;
    rec.bytes_read += static_cast<int64_t>(in->byte_size());
  }
  if (step.nodes.size() == 1) {
    const Node& n = g.node(step.nodes[0]);
    rec.flops = count_flops(n.op_type, n.attrs, dims_of(e.inputs), dims_of(e.outputs));
    // A kernel that holds operands itself (weights baked in when it was built, as the
    // fused program's channels-last Conv) is given fewer tensors than its node reads:
    // count from the graph's shapes, as for a fused step.
    if (e.inputs.size() < n.inputs.size()) {
      if (const int64_t from_graph = node_flops_from_graph(g, n); from_graph > 0)
        rec.flops = from_graph;
    }
  } else {
    for (NodeId id : step.nodes) rec.flops += node_flops_from_graph(g, g.node(id));
  }
  rec.input_shapes = shapes_text(e.inputs);
  rec.output_shapes = shapes_text(e.outputs);
}

KernelEvent make_event(const Step& step, const Graph& g, const StepRecord& rec) {
  KernelEvent k;
  k.name = step.name;
  for (NodeId id : step.nodes) {
    k.op_types.push_back(g.node(id).op_type);
    k.nodes.push_back(g.node(id).name);
  }
  if (k.op_types.empty()) k.op_types.push_back(step.op_type);
  // A fused step names its group: the index (colours, tables) and the id (the step's
  // name, e.g. "fg-1a2b3c4d"), so that a trace viewer shows which group ran.
  k.group_id = step.group_id;
  if (step.group_id) k.args["group"] = step.name;
  k.bytes_read = rec.bytes_read;
  k.bytes_written = rec.bytes_written;
  k.flops = rec.flops;
  k.args["inputs"] = rec.input_shapes;
  k.args["outputs"] = rec.output_shapes;
  return k;
}

}  // namespace

std::string cpu_device_name(int threads) {
  std::string model = "unknown cpu";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  return "cpu: " + model + ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

Timeline ProfileResult::representative_timeline() const {
  return timeline.single_run(representative_run(timeline));
}

ProfileResult Profiler::profile(const Graph& graph) const {
  return profile(graph, make_steps(graph, options_.opset));
}

struct ProfileSession::Recording {
  std::vector<StepRecord> records;
  std::vector<Sample> samples;
  // Kernels inside control-flow bodies, with the timed run they belong to.
  std::vector<std::pair<int, NestedStepEvent>> nested;
  std::vector<std::size_t> run_begin;  // first sample of each timed run
  std::vector<double> run_ms;
  std::vector<Tensor> outputs;
  bool timing = false;
};

ProfileSession::ProfileSession(const Graph& graph, std::vector<Step> steps, ProfileOptions options)
    : graph_(graph), options_(std::move(options)) {
  executor_ = std::make_unique<Executor>(graph, std::move(steps),
                                         ExecutorOptions{options_.threads, options_.opset});
  rec_ = std::make_unique<Recording>();
  const auto& ex_steps = executor_->steps();
  rec_->records.resize(ex_steps.size());
  // Reserved up front so that timed runs do not allocate (within reason).
  rec_->samples.reserve(ex_steps.size() *
                        static_cast<std::size_t>(std::clamp(options_.runs, 1, 1000)));
  Recording* rec = rec_.get();
  executor_->set_step_observer([rec, &ex_steps, &graph](const StepEvent& e) {
    auto s = static_cast<std::size_t>(e.step);
    if (s >= rec->records.size()) return;
    if (!rec->records[s].captured) capture(rec->records[s], ex_steps[s], graph, e);
    if (rec->timing) rec->samples.push_back({e.step, e.thread, e.start_ns, e.end_ns});
  });
}

ProfileSession::~ProfileSession() = default;

std::vector<Tensor> ProfileSession::run(const std::map<std::string, Tensor>& inputs, bool timed) {
  rec_->timing = timed;
  if (!timed) {
    rec_->outputs = executor_->run(inputs);
    return rec_->outputs;
  }
  rec_->run_begin.push_back(rec_->samples.size());
  Recording* rec = rec_.get();
  const int run_index = static_cast<int>(rec_->run_begin.size()) - 1;
  ScopedNestedObserver nested(
      [rec, run_index](const NestedStepEvent& e) { rec->nested.emplace_back(run_index, e); });
  Stopwatch sw;
  rec_->outputs = executor_->run(inputs);
  rec_->run_ms.push_back(sw.elapsed_ms());
  rec_->timing = false;
  return rec_->outputs;
}

ProfileResult ProfileSession::finish(std::map<std::string, Tensor> inputs) {
  if (rec_->run_ms.empty()) throw Error("profile: no timed run was recorded");
  const auto& ex_steps = executor_->steps();
  const auto& samples = rec_->samples;
  auto run_begin = rec_->run_begin;
  run_begin.push_back(samples.size());
  const int runs = static_cast<int>(rec_->run_ms.size());

  ProfileResult r;
  r.run_ms = rec_->run_ms;
  r.outputs = rec_->outputs;
  r.threads = executor_->threads();
  r.runs = runs;
  r.warmup = options_.warmup;
  r.device = cpu_device_name(r.threads);
  r.timeline.source = options_.source;
  r.timeline.device = r.device;
  r.timeline.lane_names[0] = "executor";
  const int64_t t0 = samples.empty() ? 0 : samples.front().start_ns;
  for (int run = 0; run < runs; ++run) {
    for (std::size_t i = run_begin[run]; i < run_begin[run + 1]; ++i) {
      const Sample& s = samples[i];
      const auto step = static_cast<std::size_t>(s.step);
      KernelEvent k = make_event(ex_steps[step], graph_, rec_->records[step]);
      k.run = run;
      k.lane = s.thread;
      k.start_us = static_cast<double>(s.start_ns - t0) / 1e3;
      k.duration_us = static_cast<double>(s.end_ns - s.start_ns) / 1e3;
      r.timeline.events.push_back(std::move(k));
    }
  }
  for (const auto& [run, e] : rec_->nested) {
    KernelEvent k;
    k.name = e.path;
    k.op_types = {e.op_type};
    k.nodes = {e.path};
    k.run = run;
    k.start_us = static_cast<double>(e.start_ns - t0) / 1e3;
    k.duration_us = static_cast<double>(e.end_ns - e.start_ns) / 1e3;
    k.args["depth"] = std::to_string(e.depth);
    k.args["parent"] = e.parent;
    r.timeline.events.push_back(std::move(k));
  }
  // Nested kernels next to their control-flow node, in start order within a run.
  if (!rec_->nested.empty())
    std::stable_sort(r.timeline.events.begin(), r.timeline.events.end(),
                     [](const KernelEvent& a, const KernelEvent& b) {
                       return a.run != b.run ? a.run < b.run : a.start_us < b.start_us;
                     });
  r.kernels = aggregate_kernels(r.timeline);
  r.median_ms = median(r.run_ms);
  r.peak_activation_bytes = executor_->peak_activation_bytes();
  r.total_activation_bytes = executor_->total_activation_bytes();
  r.inputs = std::move(inputs);
  spdlog::debug("profiled {} steps x {} runs: median {:.3f} ms", ex_steps.size(), r.runs,
                r.median_ms);
  return r;
}

ProfileResult Profiler::profile(const Graph& graph, std::vector<Step> steps,
                                std::map<std::string, Tensor> inputs) const {
  if (options_.runs < 1) throw Error("profile: --runs must be at least 1");
  if (options_.warmup < 0) throw Error("profile: --warmup must not be negative");
  if (inputs.empty()) inputs = random_inputs(graph, options_.seed);
  ProfileSession session(graph, std::move(steps), options_);
  for (int i = 0; i < options_.warmup; ++i) session.run(inputs, false);
  for (int i = 0; i < options_.runs; ++i) session.run(inputs, true);
  return session.finish(std::move(inputs));
}

}  // namespace fx
