// SPDX-License-Identifier: Apache-2.0
#include "profile/equivalence.h"

#include <fmt/format.h>

#include <cmath>

#include "util/error.h"

namespace fx {

void TensorDiff::merge(const TensorDiff& o) {
  if (!o.match && match) where = o.where;
  match = match && o.match;
  max_abs_error = std::max(max_abs_error, o.max_abs_error);
  max_rel_error = std::max(max_rel_error, o.max_rel_error);
  mismatches += o.mismatches;
  max_abs_expected = std::max(max_abs_expected, o.max_abs_expected);
}

double quantization_step(const Graph& g, ValueId v) {
  if (v == kNoValue) return 0;
  const Value& val = g.value(v);
  if (val.dtype == DType::Int8 || val.dtype == DType::UInt8) return 1;
  if (val.producer == kNoNode) return 0;
  const Node& dq = g.node(val.producer);
  if (dq.op_type != "DequantizeLinear" || dq.inputs.size() < 2 || dq.inputs[1] == kNoValue)
    return 0;
  const Value& scale = g.value(dq.inputs[1]);
  if (!scale.is_constant() || !scale.data || scale.data->numel() != 1) return 0;
  const float s = scale.data->to_floats()[0];
  return std::isfinite(s) && s > 0 ? double(s) : 0;
}

std::vector<double> quantization_steps(const Graph& g, const std::vector<ValueId>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (ValueId v : values) out.push_back(quantization_step(g, v));
  return out;
}

TensorDiff compare_tensors(const Tensor& e, const Tensor& a, const std::string& name,
                           const Tolerance& tol, double step) {
  TensorDiff d;
  if (e.dtype() != a.dtype() || e.dims() != a.dims()) {
    d.match = false;
    d.max_abs_error = INFINITY;
    d.where = fmt::format("{}: expected {}, got {}", name, e.str(), a.str());
    return d;
  }
  if (e.dtype() == DType::String) return d;  // not compared
  if (step <= 0 && (e.dtype() == DType::UInt8 || e.dtype() == DType::Int8)) step = 1;
  const std::vector<float> ev = e.to_floats(), av = a.to_floats();
  for (float x : ev)
    if (std::isfinite(x)) d.max_abs_expected = std::max(d.max_abs_expected, double(std::fabs(x)));
  const double scale = tol.scaled ? std::max(1.0, d.max_abs_expected) : 1.0;
  const double atol = tol.atol * scale;
  // Quantized: within tol.steps steps, plus the float tolerance (a dequantized
  // value is a multiple of its step computed in float, so one step apart can read as a
  // hair more than one step).
  const double steps_allowed = step > 0 ? tol.steps * step : 0;
  auto allowed = [&](double x) { return steps_allowed + atol + tol.rtol * std::fabs(x); };
  int64_t first_bad = -1;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const double x = ev[i], y = av[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) && std::isnan(y)) continue;
      d.max_abs_error = INFINITY;
      ++d.mismatches;
      if (first_bad < 0) first_bad = int64_t(i);
      continue;
    }
    if (std::isinf(x) && x == y) continue;
    const double err = std::fabs(y - x);
    d.max_abs_error = std::max(d.max_abs_error, err);
    if (std::fabs(x) > std::max(atol, steps_allowed))
      d.max_rel_error = std::max(d.max_rel_error, err / std::fabs(x));
    if (!(err <= allowed(x))) {
      ++d.mismatches;
      if (first_bad < 0) first_bad = int64_t(i);
    }
  }
  if (d.mismatches > 0) {
    d.match = false;
    const auto i = static_cast<std::size_t>(first_bad);
    const std::string rule =
        step > 0 ? fmt::format(
                       "{:g} step of {:g} (quantized; {:.3g} steps off) plus rtol {:g} "
                       "atol {:g} ({}, scale {:g})",
                       tol.steps, step, std::fabs(double(av[i]) - ev[i]) / step, tol.rtol, atol,
                       tol.mode(), scale)
                 : fmt::format("rtol {:g} atol {:g} ({}, scale {:g})", tol.rtol, atol, tol.mode(),
                               scale);
    d.where = fmt::format("{}: {} of {} elements outside {} (first at {}: expected {:g}, got {:g})",
                          name, d.mismatches, ev.size(), rule, i, ev[i], av[i]);
  }
  return d;
}

TensorDiff compare_outputs(const std::vector<Tensor>& expected, const std::vector<Tensor>& actual,
                           const std::vector<std::string>& names, const Tolerance& tol,
                           const std::vector<double>& steps) {
  TensorDiff all;
  if (expected.size() != actual.size()) {
    all.match = false;
    all.max_abs_error = INFINITY;
    all.where = fmt::format("expected {} outputs, got {}", expected.size(), actual.size());
    return all;
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    std::string name = i < names.size() ? names[i] : "output " + std::to_string(i);
    all.merge(compare_tensors(expected[i], actual[i], name, tol, i < steps.size() ? steps[i] : 0));
  }
  return all;
}

CapturedRun capture_values(Executor& ex, const std::map<std::string, Tensor>& inputs,
                           const std::set<ValueId>& wanted) {
  CapturedRun run;
  ValueStore& store = run.values;
  const auto& steps = ex.steps();
  ex.set_step_observer([&](const StepEvent& e) {
    const Step& s = steps[static_cast<std::size_t>(e.step)];
    auto keep = [&](const std::vector<ValueId>& ids, std::span<const Tensor* const> ts) {
      for (std::size_t i = 0; i < ids.size() && i < ts.size(); ++i)
        if (ids[i] != kNoValue && ts[i] && ts[i]->defined() && wanted.count(ids[i]) &&
            !store.count(ids[i]))
          store[ids[i]] = ts[i]->clone();
    };
    keep(s.inputs, e.inputs);
    keep(s.outputs, e.outputs);
  });
  try {
    run.outputs = ex.run(inputs);
  } catch (...) {
    ex.set_step_observer(nullptr);
    throw;
  }
  ex.set_step_observer(nullptr);
  return run;
}

namespace {

// A step run outside an executor: inputs from the store, outputs freshly allocated.
class IsolatedContext final : public KernelContext {
 public:
  IsolatedContext(const Step& step, std::vector<const Tensor*> inputs, int threads)
      : step_(step), inputs_(std::move(inputs)), outputs_(step.outputs.size()), threads_(threads) {}
  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override {
    return i >= 0 && i < num_inputs() ? inputs_[static_cast<std::size_t>(i)] : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    Tensor& t = slot(i);
    if (!t.defined() || t.dtype() != dtype || t.dims() != dims) t = Tensor(dtype, dims);
    return t;
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    if (dims_numel(dims) != src.numel())
      throw Error("cannot view " + src.str() + " as " + dims_str(dims));
    slot(i) = Tensor::view(src.dtype(), dims, src.raw());
  }
  int threads() const override { return threads_; }
  const std::string& step_name() const override { return step_.name; }
  const std::vector<Tensor>& outputs() const { return outputs_; }

 private:
  Tensor& slot(int i) {
    if (i < 0 || i >= num_outputs())
      throw Error("kernel wrote output " + std::to_string(i) + " that the step does not have");
    return outputs_[static_cast<std::size_t>(i)];
  }
  const Step& step_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  int threads_;
};

}  // namespace

TensorDiff check_step(const Graph& g, const Step& step, const ValueStore& ref, int threads,
                      const Tolerance& tol) {
  auto stored = [&](ValueId v) -> const Tensor& {
    auto it = ref.find(v);
    if (it == ref.end())
      throw Error("step " + step.name + ": value '" + g.value(v).name +
                  "' was not seen in the unfused run");
    return it->second;
  };
  std::vector<const Tensor*> in;
  // Copies, so that a kernel writing into its input cannot spoil the reference.
  std::vector<Tensor> copies;
  copies.reserve(step.inputs.size());
  for (ValueId v : step.inputs) {
    if (v == kNoValue) {
      in.push_back(nullptr);
      continue;
    }
    copies.push_back(stored(v).clone());
    in.push_back(&copies.back());
  }
  IsolatedContext ctx(step, std::move(in), threads);
  step.kernel->run(ctx);
  TensorDiff d;
  for (std::size_t i = 0; i < step.outputs.size(); ++i) {
    const std::string name = g.value(step.outputs[i]).name;
    const Tensor& got = ctx.outputs()[i];
    if (!got.defined()) {
      TensorDiff miss;
      miss.match = false;
      miss.max_abs_error = INFINITY;
      miss.where = name + ": the fused kernel did not write it";
      d.merge(miss);
      continue;
    }
    d.merge(compare_tensors(stored(step.outputs[i]), got, name, tol,
                            quantization_step(g, step.outputs[i])));
  }
  return d;
}

}  // namespace fx
