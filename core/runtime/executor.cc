// SPDX-License-Identifier: Apache-2.0
#include "runtime/executor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <queue>
#include <thread>

#include "runtime/constant_steps.h"
#include "runtime/half_adapter.h"
#include "runtime/kernel_registry.h"
#include "runtime/memory_plan.h"
#include "runtime/overwrite_input.h"
#include "runtime/parallel.h"
#include "runtime/thread_pool.h"
#include "util/error.h"

namespace fx {

std::vector<Step> make_steps(const Graph& original, int64_t opset) {
  // Primitives that kernels make now are made as they will run, on one OpenMP thread
  // (run_values): some oneDNN implementations size their OpenMP regions by the thread
  // count they were made under.
  OneOmpThread one_omp;
  // Kernels are built over float32 copies of half weights (half_adapter.h).
  std::optional<Graph> widened;
  if (has_half_constants(original)) widened = widen_half_constants(original);
  const Graph& half_free = widened ? *widened : original;
  // Dequantized weights computed once, so their consumers see constants (constant_steps.h).
  PrecomputedSteps pre = precompute_constant_steps(half_free, opset);
  const Graph& graph = pre.graph ? *pre.graph : half_free;
  std::vector<Step> steps;
  steps.reserve(graph.node_count());
  for (NodeId id : original.topological_order()) {
    const Node& n = graph.node(id);
    auto it = pre.kernels.find(id);
    auto kernel = it != pre.kernels.end() ? it->second : make_kernel(graph, n, opset);
    steps.push_back(
        Step{n.name, n.op_type, {id}, n.inputs, n.outputs, std::move(kernel), std::nullopt});
  }
  return steps;
}

void substitute_step(std::vector<Step>& steps, Step fused) {
  std::vector<bool> drop(steps.size(), false);
  std::size_t covered = 0;
  for (NodeId n : fused.nodes) {
    bool found = false;
    for (std::size_t s = 0; s < steps.size() && !found; ++s) {
      const auto& ns = steps[s].nodes;
      if (std::find(ns.begin(), ns.end(), n) == ns.end()) continue;
      found = true;
      if (!drop[s]) {
        drop[s] = true;
        covered += ns.size();
      }
    }
    if (!found)
      throw Error("substitute_step '" + fused.name + "': node " + std::to_string(n) +
                  " is not in any step");
  }
  if (covered != fused.nodes.size()) {
    throw Error("substitute_step '" + fused.name +
                "': the replaced steps cover nodes outside the fused group");
  }
  std::size_t at = steps.size();
  std::vector<Step> out;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    if (drop[s]) {
      at = std::min(at, out.size());
      continue;
    }
    out.push_back(std::move(steps[s]));
  }
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(std::min(at, out.size())), std::move(fused));
  steps = std::move(out);
}

// Per-run state: a Tensor per value, arena slots, the step contexts' scratch.
class Executor::State {
 public:
  MemoryPlan plan;
  std::vector<Tensor> values;
  std::vector<BoxedPtr> boxed;  // per value: set when it holds a sequence/optional
  std::vector<std::unique_ptr<AlignedBuffer>> slots;
  std::vector<std::unique_ptr<AlignedBuffer>> private_buffers;  // per value, rare fallback
  std::vector<std::vector<const Tensor*>> step_inputs;
  std::vector<std::vector<const Tensor*>> step_outputs;
  std::vector<bool> is_constant;
  int64_t total_bytes = 0;
};

namespace {

class StepContext final : public KernelContext {
 public:
  StepContext(const Step& step, std::vector<Tensor>& values, std::vector<BoxedPtr>& boxed,
              const MemoryPlan& plan, std::vector<std::unique_ptr<AlignedBuffer>>& slots,
              std::vector<std::unique_ptr<AlignedBuffer>>& priv,
              const std::vector<const Tensor*>& inputs, int threads, int64_t opset)
      : step_(step),
        values_(values),
        boxed_(boxed),
        plan_(plan),
        slots_(slots),
        priv_(priv),
        inputs_(inputs),
        threads_(threads),
        opset_(opset) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override {
    return i >= 0 && i < num_inputs() ? inputs_[static_cast<std::size_t>(i)] : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(step_.outputs.size()); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    ValueId v = value_of_output(i);
    if (dtype == DType::String) {  // strings own their elements: no arena slot
      values_[static_cast<std::size_t>(v)] = Tensor(dtype, dims);
      return values_[static_cast<std::size_t>(v)];
    }
    int64_t n = dims_numel(dims);
    std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dtype);
    int slot = plan_.slot_of_value[static_cast<std::size_t>(v)];
    AlignedBuffer* buf;
    if (slot >= 0) {
      buf = slots_[static_cast<std::size_t>(slot)].get();
    } else {
      auto& p = priv_[static_cast<std::size_t>(v)];
      if (!p) p = std::make_unique<AlignedBuffer>();
      buf = p.get();
    }
    buf->reserve(bytes);
    Tensor& t = values_[static_cast<std::size_t>(v)];
    t.reset_view(dtype, dims, buf->data());
    return t;
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    ValueId v = value_of_output(i);
    if (dims_numel(dims) != src.numel()) {
      throw Error("cannot view " + src.str() + " as " + dims_str(dims));
    }
    if (src.is_string()) {  // share the elements' owner
      values_[static_cast<std::size_t>(v)] = src.reshaped(dims);
      return;
    }
    values_[static_cast<std::size_t>(v)].reset_view(src.dtype(), dims,
                                                    const_cast<void*>(src.raw()));
  }
  BoxedPtr input_boxed(int i) const override {
    if (i < 0 || i >= num_inputs()) return nullptr;
    const ValueId v = step_.inputs[static_cast<std::size_t>(i)];
    return v == kNoValue ? nullptr : boxed_[static_cast<std::size_t>(v)];
  }
  void set_output_boxed(int i, BoxedPtr value) override {
    const ValueId v = value_of_output(i);
    values_[static_cast<std::size_t>(v)] = Tensor();
    boxed_[static_cast<std::size_t>(v)] = std::move(value);
  }
  int threads() const override { return threads_; }
  int64_t opset() const override { return opset_; }
  const std::string& step_name() const override { return step_.name; }

 private:
  ValueId value_of_output(int i) const {
    if (i < 0 || i >= num_outputs())
      throw Error("kernel wrote output " + std::to_string(i) + " that the step does not have");
    const ValueId v = step_.outputs[static_cast<std::size_t>(i)];
    if (v == kNoValue)
      throw Error("kernel wrote output " + std::to_string(i) + ", which the model leaves out");
    return v;
  }
  const Step& step_;
  std::vector<Tensor>& values_;
  std::vector<BoxedPtr>& boxed_;
  const MemoryPlan& plan_;
  std::vector<std::unique_ptr<AlignedBuffer>>& slots_;
  std::vector<std::unique_ptr<AlignedBuffer>>& priv_;
  const std::vector<const Tensor*>& inputs_;
  int threads_;
  int64_t opset_;
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Executor::Executor(const Graph& graph, ExecutorOptions options)
    : Executor(graph, make_steps(graph, options.opset), options) {}

Executor::Executor(const Graph& graph, std::vector<Step> steps, ExecutorOptions options)
    : graph_(
          std::make_shared<Graph>(has_half_constants(graph) ? widen_half_constants(graph) : graph)),
      steps_(std::move(steps)) {
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_ = options.threads > 0 ? options.threads : hw;
  opset_ = options.opset;
  build();
}

Executor::~Executor() = default;

void Executor::build() {
  const Graph& g = *graph_;
  const std::size_t nv = g.value_count();
  // Order steps by data dependencies (Kahn; ties keep the given order).
  std::vector<int> producer(nv, -1);
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    if (!steps_[s].kernel) throw Error("step '" + steps_[s].name + "' has no kernel");
    for (ValueId o : steps_[s].outputs) {
      if (o == kNoValue) continue;  // an optional output the model leaves out
      if (producer[o] >= 0)
        throw Error("value '" + g.value(o).name + "' is written by steps '" +
                    steps_[producer[o]].name + "' and '" + steps_[s].name + "'");
      producer[o] = static_cast<int>(s);
    }
  }
  std::vector<int> pending(steps_.size(), 0);
  std::vector<std::vector<int>> users(steps_.size());
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    for (ValueId i : steps_[s].inputs) {
      if (i == kNoValue) continue;
      const Value& val = g.value(i);
      if (producer[i] < 0) {
        if (!val.is_constant() && !val.is_graph_input && !val.is_outer_ref) {
          throw Error("step '" + steps_[s].name + "' reads '" + val.name +
                      "', which no step produces");
        }
        continue;
      }
      ++pending[s];
      users[producer[i]].push_back(static_cast<int>(s));
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (std::size_t s = 0; s < steps_.size(); ++s)
    if (pending[s] == 0) ready.push(static_cast<int>(s));
  std::vector<Step> ordered;
  ordered.reserve(steps_.size());
  while (!ready.empty()) {
    int s = ready.top();
    ready.pop();
    for (int u : users[s])
      if (--pending[u] == 0) ready.push(u);
    ordered.push_back(std::move(steps_[s]));
  }
  if (ordered.size() != steps_.size()) throw Error("the steps' data dependencies form a cycle");
  steps_ = std::move(ordered);
  for (ValueId o : g.outputs()) {
    const Value& val = g.value(o);
    if (!val.is_constant() && !val.is_graph_input && !val.is_outer_ref && producer[o] < 0) {
      throw Error("graph output '" + val.name + "' is not produced by any step");
    }
  }

  state_ = std::make_unique<State>();
  std::vector<PlanStep> ps;
  for (const Step& s : steps_) {
    const int over = overwritable_input(*s.kernel);
    ps.push_back({s.inputs, s.outputs, s.kernel->aliases_input(), over >= 0, std::max(over, 0)});
  }
  state_->plan = MemoryPlan::build(g, ps);
  state_->values.resize(nv);
  state_->boxed.resize(nv);
  state_->is_constant.assign(nv, false);
  for (std::size_t v = 0; v < nv; ++v) {
    if (g.value(static_cast<ValueId>(v)).is_constant() && producer[v] < 0) {
      state_->values[v] = Tensor::from_data(g.value(static_cast<ValueId>(v)).data);
      state_->is_constant[v] = true;
    }
  }
  for (int k = 0; k < state_->plan.slot_count(); ++k) {
    state_->slots.push_back(std::make_unique<AlignedBuffer>());
  }
  state_->private_buffers.resize(nv);
  for (const Step& s : steps_) {
    std::vector<const Tensor*> in, out;
    for (ValueId i : s.inputs) in.push_back(i == kNoValue ? nullptr : &state_->values[i]);
    for (ValueId o : s.outputs) out.push_back(o == kNoValue ? nullptr : &state_->values[o]);
    state_->step_inputs.push_back(std::move(in));
    state_->step_outputs.push_back(std::move(out));
  }
  spdlog::debug("executor: {} steps, {} arena slots, ~{} activation bytes planned", steps_.size(),
                state_->plan.slot_count(), peak_activation_bytes());
}

std::vector<Tensor> Executor::run(const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, RunValue> in;
  for (const auto& [name, t] : inputs) in.emplace(name, RunValue{t, nullptr});
  std::vector<RunValue> outs = run_values(in);
  std::vector<Tensor> out;
  out.reserve(outs.size());
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].is_boxed())
      throw Error("graph output '" + graph_->value(graph_->outputs()[i]).name +
                  "' is a sequence or optional, not a tensor");
    out.push_back(std::move(outs[i].tensor));
  }
  return out;
}

std::vector<RunValue> Executor::run_values(const std::map<std::string, RunValue>& inputs) {
  const Graph& g = *graph_;
  State& st = *state_;
  auto feed = [&](ValueId v, bool outer) {
    const Value& val = g.value(v);
    auto it = inputs.find(val.name);
    if (it == inputs.end())
      throw Error(std::string(outer ? "missing outer-scope value '" : "missing input '") +
                  val.name + "'");
    const RunValue& rv = it->second;
    if (rv.is_boxed()) {
      st.values[v] = Tensor();
      st.boxed[v] = rv.boxed;
      return;
    }
    if (val.kind == ValueKind::Tensor && val.dtype != DType::Undefined &&
        rv.tensor.dtype() != val.dtype) {
      throw Error("input '" + val.name + "' is " + std::string(dtype_name(rv.tensor.dtype())) +
                  ", the model expects " + std::string(dtype_name(val.dtype)));
    }
    st.values[v] = rv.tensor;
    st.boxed[v] = nullptr;
  };
  for (ValueId v : g.runtime_inputs()) feed(v, false);
  for (ValueId v : g.outer_refs()) feed(v, true);
  // Our kernels use the pool (ScopedThreads). oneDNN runs on one OpenMP thread: the
  // large primitives are already cut into parts over the pool, and a 2-thread OpenMP
  // region for the rest (reorders, small matmuls) leaves its worker spinning beside the
  // pool's, which made whole processes run at one thread's speed (bimodal timings,
  // docs/benchmarks.md, "bimodal per process").
  ScopedThreads pool_threads(threads_);
  OneOmpThread one_omp;
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    StepContext ctx(step, st.values, st.boxed, st.plan, st.slots, st.private_buffers,
                    st.step_inputs[s], threads_, opset_);
    int64_t t0 = observer_ ? now_ns() : 0;
    try {
      step.kernel->run(ctx);
    } catch (const std::exception& e) {
      throw Error("step '" + step.name + "' (" + step.op_type + "): " + e.what());
    }
    if (observer_) {
      StepEvent ev;
      ev.step = static_cast<int>(s);
      ev.start_ns = t0;
      ev.end_ns = now_ns();
      ev.group_id = step.group_id;
      ev.inputs = st.step_inputs[s];
      ev.outputs = st.step_outputs[s];
      observer_(ev);
    }
  }
  std::vector<RunValue> out;
  out.reserve(g.outputs().size());
  st.total_bytes = 0;
  for (const Step& step : steps_) {
    for (ValueId o : step.outputs)
      if (o != kNoValue) st.total_bytes += static_cast<int64_t>(st.values[o].byte_size());
  }
  for (ValueId o : g.outputs()) {
    if (st.boxed[o])
      out.push_back(RunValue{Tensor(), st.boxed[o]});
    else
      out.push_back(RunValue{st.values[o].clone(), nullptr});
  }
  // Drop the caller's buffers and every box (they may hold large sequences).
  for (ValueId v : g.runtime_inputs()) st.values[v] = Tensor();
  for (ValueId v : g.outer_refs()) st.values[v] = Tensor();
  std::fill(st.boxed.begin(), st.boxed.end(), nullptr);
  return out;
}

int64_t Executor::peak_activation_bytes() const {
  int64_t sum = 0;
  for (int k = 0; k < state_->plan.slot_count(); ++k) {
    int64_t cap = static_cast<int64_t>(state_->slots[k]->capacity());
    sum += cap > 0 ? cap : state_->plan.slot_estimate[k];
  }
  return sum;
}

int64_t Executor::total_activation_bytes() const {
  return state_->total_bytes;
}
int Executor::slot_count() const {
  return state_->plan.slot_count();
}
int Executor::slot_of(ValueId v) const {
  return state_->plan.slot_of_value.at(v);
}

}  // namespace fx
