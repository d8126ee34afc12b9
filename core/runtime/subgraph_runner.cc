// SPDX-License-Identifier: Apache-2.0
#include "runtime/subgraph_runner.h"

#include <cstring>
#include <map>

#include "ir/subgraph.h"
#include "runtime/nested_steps.h"
#include "util/error.h"

namespace fx {

namespace {
// Every op of `g` and of its nested subgraphs has a kernel; throws naming the first
// that does not.
void check_supported(const Graph& g, const std::string& where) {
  for (const Node& n : g.nodes()) {
    if (!is_supported_op(n.domain, n.op_type))
      throw Error("unsupported op " + n.qualified_op() + " (node '" + n.name + "' in " + where +
                  ")");
    for (const auto& [attr, sub] : subgraphs_of(n))
      check_supported(*sub, "subgraph '" + attr + "' of node '" + n.name + "'");
  }
}
}  // namespace

SubgraphRunner::SubgraphRunner(const Graph& outer, const Node& node, const std::string& attribute) {
  const auto* attr = node.attrs.find(attribute);
  const auto* ref = attr ? std::get_if<SubgraphRef>(attr) : nullptr;
  if (!ref || !ref->graph) throw Error("missing graph attribute '" + attribute + "'");
  body_ = ref->graph;
  node_ = node.name;
  attribute_ = attribute;
  where_ = "subgraph '" + attribute + "' of node '" + node.name + "'";
  check_supported(*body_, where_);
  formal_ = body_->runtime_inputs();
  first_implicit_ = explicit_input_count(node);
  for (std::size_t k = static_cast<std::size_t>(first_implicit_); k < node.inputs.size(); ++k)
    outer_names_.push_back(outer.value(node.inputs[k]).name);
}

std::vector<RunValue> SubgraphRunner::run(KernelContext& ctx, const std::vector<RunValue>& inputs) {
  if (inputs.size() != formal_.size())
    throw Error(where_ + " takes " + std::to_string(formal_.size()) + " inputs, given " +
                std::to_string(inputs.size()));
  if (!exec_)
    exec_ = std::make_unique<Executor>(*body_, ExecutorOptions{ctx.threads(), ctx.opset()});
  std::map<std::string, RunValue> feed;
  for (std::size_t i = 0; i < formal_.size(); ++i) feed[body_->value(formal_[i]).name] = inputs[i];
  for (std::size_t k = 0; k < outer_names_.size(); ++k)
    feed[outer_names_[k]] = input_value(ctx, first_implicit_ + static_cast<int>(k));
  try {
    const detail::NestedScope* outer = detail::current_nested_scope();
    if (!outer || !outer->observer) {
      exec_->set_step_observer({});
      return exec_->run_values(feed);
    }
    detail::EnterNestedScope inside(*outer, node_, attribute_);
    const detail::NestedScope& scope = inside.scope();
    exec_->set_step_observer([this, &scope](const StepEvent& e) {
      const Step& step = exec_->steps()[static_cast<std::size_t>(e.step)];
      (*scope.observer)(NestedStepEvent{scope.prefix + step.name, step.op_type, scope.parent,
                                        scope.depth, e.start_ns, e.end_ns});
    });
    return exec_->run_values(feed);
  } catch (const std::exception& e) {
    throw Error(where_ + ": " + e.what());
  }
}

RunValue input_value(const KernelContext& ctx, int i) {
  if (BoxedPtr b = ctx.input_boxed(i)) return RunValue{Tensor(), std::move(b)};
  if (const Tensor* t = ctx.input(i)) return RunValue{*t, nullptr};
  return {};
}

void write_output(KernelContext& ctx, int i, const RunValue& v) {
  if (v.is_boxed()) {
    ctx.set_output_boxed(i, v.boxed);
    return;
  }
  if (!v.tensor.defined()) throw Error("output " + std::to_string(i) + " has no value");
  Tensor& out = ctx.output(i, v.tensor.dtype(), v.tensor.dims());
  if (v.tensor.byte_size()) std::memcpy(out.raw(), v.tensor.raw(), v.tensor.byte_size());
}

bool scalar_bool(const Tensor& t, const char* what) {
  return scalar_int(t, what) != 0;
}

int64_t scalar_int(const Tensor& t, const char* what) {
  if (!t.defined() || t.numel() != 1)
    throw Error(std::string(what) + " must hold one element, got " + t.str());
  return t.to_int64s()[0];
}

}  // namespace fx
