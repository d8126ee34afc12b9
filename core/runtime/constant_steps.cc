// SPDX-License-Identifier: Apache-2.0
#include "runtime/constant_steps.h"

#include <cstring>

#include "runtime/kernel_registry.h"
#include "util/error.h"

namespace fx {
namespace {

// Runs one kernel outside an executor: inputs are constants, outputs fresh tensors.
class BuildTimeContext final : public KernelContext {
 public:
  BuildTimeContext(const Node& n, std::vector<Tensor> inputs, int64_t opset)
      : name_(n.name), inputs_(std::move(inputs)), outputs_(n.outputs.size()), opset_(opset) {}
  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override {
    if (i < 0 || i >= num_inputs()) return nullptr;
    const Tensor& t = inputs_[static_cast<std::size_t>(i)];
    return t.defined() ? &t : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    return slot(i) = Tensor(dtype, dims);
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    Tensor& t = slot(i) = Tensor(src.dtype(), dims);
    std::memcpy(t.raw(), src.raw(),
                static_cast<std::size_t>(src.numel()) * dtype_size(src.dtype()));
  }
  int threads() const override { return 1; }
  int64_t opset() const override { return opset_; }
  const std::string& step_name() const override { return name_; }
  Tensor& slot(int i) {
    if (i < 0 || i >= num_outputs())
      throw Error("step '" + name_ + "' has no output " + std::to_string(i));
    return outputs_[static_cast<std::size_t>(i)];
  }

 private:
  std::string name_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  int64_t opset_;
};

// A step whose output was computed when it was built: each run makes the output a
// view of it.
class PrecomputedKernel final : public Kernel {
 public:
  explicit PrecomputedKernel(std::shared_ptr<TensorData> data)
      : data_(std::move(data)), value_(Tensor::from_data(data_)) {}
  void run(KernelContext& ctx) override { ctx.alias_output(0, value_, value_.dims()); }
  // The output views memory the kernel owns: the memory plan gives it no slot, and no
  // later step may write over it.
  bool aliases_input() const override { return true; }

 private:
  std::shared_ptr<TensorData> data_;
  Tensor value_;
};

bool all_inputs_constant(const Graph& g, const Node& n) {
  bool any = false;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) continue;
    if (!g.value(v).is_constant()) return false;
    any = true;
  }
  return any;
}

}  // namespace

PrecomputedSteps precompute_constant_steps(const Graph& g, int64_t opset) {
  PrecomputedSteps out;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (n.op_type != "DequantizeLinear" || !n.domain.empty() || n.outputs.size() != 1 ||
        n.outputs[0] == kNoValue)
      continue;
    const Graph& cur = out.graph ? *out.graph : g;
    if (!all_inputs_constant(cur, n)) continue;
    std::vector<Tensor> in;
    for (ValueId v : n.inputs)
      in.push_back(v == kNoValue ? Tensor() : Tensor::from_data(cur.value(v).data));
    BuildTimeContext ctx(n, std::move(in), opset);
    make_kernel(cur, n, opset)->run(ctx);
    const Tensor& y = ctx.slot(0);
    std::vector<std::byte> bytes(static_cast<std::size_t>(y.numel()) * dtype_size(y.dtype()));
    std::memcpy(bytes.data(), y.raw(), bytes.size());
    auto data = TensorData::owned(y.dtype(), y.dims(), std::move(bytes));
    if (!out.graph) out.graph = g;
    Value& val = out.graph->value(n.outputs[0]);
    val.data = data;
    val.dtype = y.dtype();
    val.producer = kNoNode;  // a constant to the kernels built over this graph
    out.kernels[id] = std::make_shared<PrecomputedKernel>(std::move(data));
  }
  return out;
}

}  // namespace fx
