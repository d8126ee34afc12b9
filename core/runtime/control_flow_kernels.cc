// SPDX-License-Identifier: Apache-2.0
// If, Loop and Scan: each runs its subgraph(s) with a nested executor
// (subgraph_runner.h). Loop follows opset 11+ (optional M and cond, loop-carried
// values that may be sequences/optionals, scan outputs stacked on a new axis 0);
// Scan follows opset 9+ (scan axes and directions per input and output) and opset 8
// (a batch axis first, no sequence_lens other than the full length).

#include <algorithm>
#include <limits>

#include "ir/subgraph.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/subgraph_runner.h"
#include "runtime/tensor_slices.h"
#include "util/error.h"

namespace fx {

namespace {

void check_output_count(const std::vector<RunValue>& outs, int want, const char* what) {
  if (static_cast<int>(outs.size()) != want)
    throw Error(std::string(what) + " returned " + std::to_string(outs.size()) +
                " values, the node has " + std::to_string(want) + " outputs");
}

const Tensor& tensor_of(const RunValue& v, const char* what) {
  if (v.is_boxed()) throw Error(std::string(what) + " is a sequence or optional, not a tensor");
  return v.tensor;
}

class IfKernel final : public Kernel {
 public:
  IfKernel(const Graph& g, const Node& n)
      : then_(g, n, "then_branch"), else_(g, n, "else_branch") {}
  void run(KernelContext& ctx) override {
    const bool cond = scalar_bool(ctx.in(0), "If's cond");
    auto outs = (cond ? then_ : else_).run(ctx, {});
    check_output_count(outs, ctx.num_outputs(), cond ? "then_branch" : "else_branch");
    for (int i = 0; i < ctx.num_outputs(); ++i) write_output(ctx, i, outs[std::size_t(i)]);
  }

 private:
  SubgraphRunner then_, else_;
};

// A scan output that no iteration produced: [0] followed by the body output's dims
// when they are static (ONNX Runtime gives the same), else [0].
Tensor empty_stack(const Graph& body, ValueId v) {
  const Value& val = body.value(v);
  std::vector<int64_t> dims{0};
  if (val.shape.is_static()) {
    const auto d = val.shape.static_dims();
    dims.insert(dims.end(), d.begin(), d.end());
  }
  return Tensor(val.dtype == DType::Undefined ? DType::Float32 : val.dtype, dims);
}

class LoopKernel final : public Kernel {
 public:
  LoopKernel(const Graph& g, const Node& n) : body_(g, n, "body") {
    carried_ = explicit_input_count(n) - 2;
    if (carried_ < 0) throw Error("Loop takes M and cond (either may be empty) first");
    const int body_outs = static_cast<int>(body_.body().outputs().size());
    if (static_cast<int>(body_.formal_inputs().size()) != carried_ + 2)
      throw Error("Loop body takes " + std::to_string(body_.formal_inputs().size()) +
                  " inputs, expected iteration number, cond and " + std::to_string(carried_) +
                  " loop-carried values");
    scans_ = body_outs - 1 - carried_;
    if (scans_ < 0 || static_cast<int>(n.outputs.size()) != carried_ + scans_)
      throw Error("Loop body returns " + std::to_string(body_outs) + " values for " +
                  std::to_string(n.outputs.size()) + " outputs and " + std::to_string(carried_) +
                  " loop-carried values");
  }

  void run(KernelContext& ctx) override {
    int64_t trips = std::numeric_limits<int64_t>::max();
    if (const Tensor* m = ctx.input(0); m && m->defined()) trips = scalar_int(*m, "Loop's M");
    bool cond = true;
    if (const Tensor* c = ctx.input(1); c && c->defined()) cond = scalar_bool(*c, "Loop's cond");
    std::vector<RunValue> carried;
    for (int j = 0; j < carried_; ++j) carried.push_back(input_value(ctx, 2 + j));
    std::vector<std::vector<Tensor>> scanned(static_cast<std::size_t>(scans_));
    std::vector<RunValue> in(static_cast<std::size_t>(carried_ + 2));
    for (int64_t i = 0; i < trips && cond; ++i) {
      in[0] = RunValue{Tensor::from_int64s({}, {i}), nullptr};
      in[1] = RunValue{Tensor::from_bools({}, {cond}), nullptr};
      std::copy(carried.begin(), carried.end(), in.begin() + 2);
      auto outs = body_.run(ctx, in);
      check_output_count(outs, 1 + carried_ + scans_, "Loop body");
      cond = scalar_bool(tensor_of(outs[0], "Loop body's cond"), "Loop body's cond");
      std::copy(outs.begin() + 1, outs.begin() + 1 + carried_, carried.begin());
      for (int k = 0; k < scans_; ++k)
        scanned[std::size_t(k)].push_back(
            tensor_of(outs[std::size_t(1 + carried_ + k)], "a Loop scan output"));
    }
    for (int j = 0; j < carried_; ++j) write_output(ctx, j, carried[std::size_t(j)]);
    for (int k = 0; k < scans_; ++k) {
      const auto& parts = scanned[std::size_t(k)];
      const ValueId body_out = body_.body().outputs()[std::size_t(1 + carried_ + k)];
      Tensor stacked = parts.empty() ? empty_stack(body_.body(), body_out) : stack_along(parts, 0);
      write_output(ctx, carried_ + k, RunValue{stacked, nullptr});
    }
  }

 private:
  SubgraphRunner body_;
  int carried_ = 0;
  int scans_ = 0;
};

class ScanKernel final : public Kernel {
 public:
  ScanKernel(const Graph& g, const Node& n) : body_(g, n, "body") {
    const int formal = static_cast<int>(body_.formal_inputs().size());
    const int explicit_inputs = explicit_input_count(n);
    legacy_ = explicit_inputs == formal + 1;  // opset 8: sequence_lens first
    if (!legacy_ && explicit_inputs != formal)
      throw Error("Scan has " + std::to_string(explicit_inputs) + " inputs, its body takes " +
                  std::to_string(formal));
    scan_inputs_ = static_cast<int>(n.attrs.get_int("num_scan_inputs", -1));
    if (scan_inputs_ < 1 || scan_inputs_ > formal)
      throw Error("Scan's num_scan_inputs must be in [1, " + std::to_string(formal) + "]");
    states_ = formal - scan_inputs_;
    scan_outputs_ = static_cast<int>(body_.body().outputs().size()) - states_;
    if (scan_outputs_ < 0 || static_cast<int>(n.outputs.size()) != states_ + scan_outputs_)
      throw Error("Scan body returns " + std::to_string(body_.body().outputs().size()) +
                  " values for " + std::to_string(n.outputs.size()) + " outputs");
    auto per = [&](const char* name, int count) {
      auto v = n.attrs.get_ints(name, std::vector<int64_t>(std::size_t(count), 0));
      if (static_cast<int>(v.size()) != count)
        throw Error(std::string("Scan's ") + name + " must have " + std::to_string(count) +
                    " entries");
      return v;
    };
    in_dirs_ = per(legacy_ ? "directions" : "scan_input_directions", scan_inputs_);
    in_axes_ = legacy_ ? std::vector<int64_t>(std::size_t(scan_inputs_), 0)
                       : per("scan_input_axes", scan_inputs_);
    out_dirs_ = legacy_ ? std::vector<int64_t>(std::size_t(scan_outputs_), 0)
                        : per("scan_output_directions", scan_outputs_);
    out_axes_ = legacy_ ? std::vector<int64_t>(std::size_t(scan_outputs_), 0)
                        : per("scan_output_axes", scan_outputs_);
  }

  void run(KernelContext& ctx) override {
    const int first = legacy_ ? 1 : 0;
    std::vector<RunValue> states;
    for (int i = 0; i < states_; ++i) states.push_back(input_value(ctx, first + i));
    std::vector<Tensor> scans;
    for (int j = 0; j < scan_inputs_; ++j) scans.push_back(ctx.in(first + states_ + j));
    std::vector<Tensor> outs;
    if (!legacy_) {
      outs = scan_once(ctx, std::move(states), scans);
    } else {
      outs = scan_batches(ctx, states, scans);
    }
    for (std::size_t i = 0; i < outs.size(); ++i)
      write_output(ctx, static_cast<int>(i), RunValue{outs[i], nullptr});
  }

 private:
  // Opset 8: every input has a batch axis first; each batch entry is one scan.
  std::vector<Tensor> scan_batches(KernelContext& ctx, const std::vector<RunValue>& states,
                                   const std::vector<Tensor>& scans) {
    const int64_t batch = scans.front().dims().empty() ? 0 : scans.front().dim(0);
    if (const Tensor* lens = ctx.input(0); lens && lens->defined()) {
      for (int64_t l : lens->to_int64s())
        if (scans.front().rank() < 2 || l != scans.front().dim(1))
          throw Error("Scan (opset 8) with sequence_lens shorter than the input is not supported");
    }
    std::vector<std::vector<Tensor>> per_output(std::size_t(states_ + scan_outputs_));
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<RunValue> s;
      for (const RunValue& st : states)
        s.push_back(RunValue{take_along(tensor_of(st, "a Scan state"), 0, b), nullptr});
      std::vector<Tensor> x;
      for (const Tensor& t : scans) x.push_back(take_along(t, 0, b));
      auto outs = scan_once(ctx, std::move(s), x);
      for (std::size_t i = 0; i < outs.size(); ++i) per_output[i].push_back(std::move(outs[i]));
    }
    std::vector<Tensor> out;
    for (auto& parts : per_output) {
      if (parts.empty()) throw Error("Scan (opset 8) over an empty batch");
      out.push_back(stack_along(parts, 0));
    }
    return out;
  }

  std::vector<Tensor> scan_once(KernelContext& ctx, std::vector<RunValue> states,
                                const std::vector<Tensor>& scans) {
    std::vector<int> axes;
    int64_t length = -1;
    for (int j = 0; j < scan_inputs_; ++j) {
      const Tensor& t = scans[std::size_t(j)];
      const int a = normalize_axis(in_axes_[std::size_t(j)], int64_t(t.rank()), "scan_input_axes");
      axes.push_back(a);
      if (length >= 0 && t.dim(a) != length)
        throw Error("Scan inputs have different sequence lengths (" + std::to_string(length) +
                    " and " + std::to_string(t.dim(a)) + ")");
      length = t.dim(a);
    }
    std::vector<std::vector<Tensor>> slices(static_cast<std::size_t>(scan_outputs_));
    std::vector<RunValue> in(std::size_t(states_ + scan_inputs_));
    for (int64_t t = 0; t < length; ++t) {
      std::copy(states.begin(), states.end(), in.begin());
      for (int j = 0; j < scan_inputs_; ++j) {
        const int64_t at = in_dirs_[std::size_t(j)] ? length - 1 - t : t;
        in[std::size_t(states_ + j)] =
            RunValue{take_along(scans[std::size_t(j)], axes[std::size_t(j)], at), nullptr};
      }
      auto outs = body_.run(ctx, in);
      check_output_count(outs, states_ + scan_outputs_, "Scan body");
      std::copy(outs.begin(), outs.begin() + states_, states.begin());
      for (int k = 0; k < scan_outputs_; ++k)
        slices[std::size_t(k)].push_back(
            tensor_of(outs[std::size_t(states_ + k)], "a Scan output"));
    }
    std::vector<Tensor> out;
    for (const RunValue& s : states) out.push_back(tensor_of(s, "a Scan state"));
    for (int k = 0; k < scan_outputs_; ++k) {
      auto& parts = slices[std::size_t(k)];
      const ValueId body_out = body_.body().outputs()[std::size_t(states_ + k)];
      if (parts.empty()) {
        out.push_back(empty_stack(body_.body(), body_out));
        continue;
      }
      if (out_dirs_[std::size_t(k)]) std::reverse(parts.begin(), parts.end());
      const int a = normalize_axis(out_axes_[std::size_t(k)], int64_t(parts.front().rank()) + 1,
                                   "scan_output_axes");
      out.push_back(stack_along(parts, a));
    }
    return out;
  }

  SubgraphRunner body_;
  bool legacy_ = false;
  int scan_inputs_ = 0, states_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> in_dirs_, in_axes_, out_dirs_, out_axes_;
};

}  // namespace

void register_control_flow_kernels(KernelTable& t) {
  t["If"] = [](const Graph& g, const Node& n) { return std::make_shared<IfKernel>(g, n); };
  t["Loop"] = [](const Graph& g, const Node& n) { return std::make_shared<LoopKernel>(g, n); };
  t["Scan"] = [](const Graph& g, const Node& n) { return std::make_shared<ScanKernel>(g, n); };
  register_sequence_kernels(t);
  // Identity passes sequences and optionals through too: the tensor kernel stays for
  // tensors, a box is handed on as it is (boxes are immutable).
  if (auto tensor_identity = t.find("Identity"); tensor_identity != t.end()) {
    KernelFactory base = tensor_identity->second;
    tensor_identity->second = [base](const Graph& g, const Node& n) -> std::shared_ptr<Kernel> {
      const bool boxed = !n.inputs.empty() && n.inputs[0] != kNoValue &&
                         g.value(n.inputs[0]).kind != ValueKind::Tensor;
      if (!boxed) return base(g, n);
      return std::make_shared<FnKernel>([](KernelContext& ctx) {
        if (BoxedPtr b = ctx.input_boxed(0))
          ctx.set_output_boxed(0, std::move(b));
        else
          write_output(ctx, 0, input_value(ctx, 0));
      });
    };
  }
}

}  // namespace fx
