// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/launch_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <set>

#include "codegen/cuda_emitter.h"
#include "codegen/group_lowering.h"
#include "cuda_plan/copy_plan.h"
#include "ir/graph_queries.h"
#include "util/error.h"

namespace fx::cuda {

namespace {

bool is_view_op(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
         op == "Identity" || op == "Dropout";
}
bool is_copy_op(const std::string& op) {
  return op == "Transpose" || op == "Slice" || op == "Concat" || op == "Split" || op == "Expand";
}
bool is_pool_op(const std::string& op) {
  return op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
         op == "GlobalMaxPool";
}

// Every output known before running (a Constant node, a folded Shape): no launch.
bool computes_constants(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return false;
  for (ValueId v : n.outputs)
    if (v != kNoValue && !constant_data(g, v)) return false;
  return true;
}

std::vector<ValueId> present(const std::vector<ValueId>& vs) {
  std::vector<ValueId> out;
  for (ValueId v : vs)
    if (v != kNoValue) out.push_back(v);
  return out;
}

// A run of launches that must stay together and in order (an anchor then its
// generated epilogue), with the nodes it covers.
struct Unit {
  std::vector<Launch> launches;
  int first_position = 0;  // smallest topological position of its nodes
};

class Builder {
 public:
  Builder(const Graph& g, LaunchPlan& plan) : g_(g), plan_(plan) {
    const auto order = g.topological_order();
    position_.assign(g.node_count(), 0);
    for (std::size_t i = 0; i < order.size(); ++i) position_[order[i]] = static_cast<int>(i);
    order_ = order;
  }

  // One kernel for one node; nullopt for a node with nothing to run.
  std::optional<Launch> node_launch(NodeId id) {
    const Node& n = g_.node(id);
    if (computes_constants(g_, n)) return std::nullopt;
    Launch l;
    l.name = n.name;
    l.nodes = {id};
    l.op_types = {n.op_type};
    l.anchor = id;
    l.inputs = present(n.inputs);
    l.outputs = present(n.outputs);
    const std::string& op = n.op_type;
    if (!n.domain.empty() && n.domain != "ai.onnx")
      throw Error("CUDA: no GPU kernel for op '" + n.qualified_op() + "' (node '" + n.name + "')");
    if (op == "Conv") {
      l.kind = LaunchKind::Conv;
    } else if (op == "MatMul" || op == "Gemm") {
      l.kind = LaunchKind::Matmul;
    } else if (is_pool_op(op)) {
      l.kind = LaunchKind::Pool;
    } else if (op == "BatchNormalization") {
      l.kind = LaunchKind::BatchNorm;
      for (std::size_t i = 1; i < n.outputs.size(); ++i)
        if (n.outputs[i] != kNoValue && !g_.value(n.outputs[i]).consumers.empty())
          throw Error("CUDA: BatchNormalization node '" + n.name +
                      "': the training outputs (running mean/var) are not supported");
      l.outputs = {n.outputs.at(0)};
    } else if (is_view_op(op)) {
      l.kind = LaunchKind::View;
      // The shape operand is read on the host; the view reads only its data.
      l.inputs = {n.inputs.at(0)};
      if (op == "Dropout") l.outputs = {n.outputs.at(0)};
    } else if (is_copy_op(op)) {
      l.kind = LaunchKind::Copy;
    } else if (op == "Gather") {
      l.kind = LaunchKind::Gather;
    } else if (is_comparison(op)) {
      l.kind = LaunchKind::Compare;
    } else {
      const std::string entry =
          c_identifier("n" + std::to_string(plan_.generated.size()) + "-" + n.name);
      LowerResult r = lower_group(g_, {id}, n.name, entry);
      if (!r.group)
        throw Error("CUDA: no GPU kernel for op '" + op + "' (node '" + n.name + "'): " + r.reason);
      return generated_launch(std::move(*r.group), {id});
    }
    return l;
  }

  Launch generated_launch(LoweredGroup lg, const std::vector<NodeId>& nodes) {
    Launch l;
    l.kind = LaunchKind::Generated;
    l.name = lg.group_id;
    l.nodes = nodes;
    for (NodeId n : nodes) l.op_types.push_back(g_.node(n).op_type);
    for (const auto& in : lg.inputs) l.inputs.push_back(in.value);
    for (const auto& out : lg.outputs) l.outputs.push_back(out.value);
    l.generated = static_cast<int>(plan_.generated.size());
    plan_.generated.push_back(std::move(lg));
    return l;
  }

  void add_unit(std::vector<Launch> launches) {
    if (launches.empty()) return;
    Unit u;
    u.first_position = static_cast<int>(g_.node_count());
    for (const auto& l : launches)
      for (NodeId n : l.nodes) u.first_position = std::min(u.first_position, position_[n]);
    u.launches = std::move(launches);
    units_.push_back(std::move(u));
  }

  void add_node(NodeId id) {
    if (auto l = node_launch(id)) add_unit({std::move(*l)});
  }

  // The anchor's epilogue when the group's whole rest folds into it; nullopt otherwise.
  std::optional<Epilogue> folded_epilogue(const std::vector<NodeId>& nodes) {
    const Node& anchor = g_.node(nodes[0]);
    const bool conv = anchor.op_type == "Conv";
    const bool gemm_bias =
        anchor.op_type == "Gemm" && anchor.inputs.size() > 2 && anchor.inputs[2] != kNoValue;
    const bool conv_bias = conv && anchor.inputs.size() > 2 && anchor.inputs[2] != kNoValue;
    if (anchor.outputs.empty()) return std::nullopt;
    ValueId current = anchor.outputs[0];
    const Value& out = g_.value(current);
    if (!out.shape.is_static()) return std::nullopt;
    const auto dims = out.shape.static_dims();
    if (dims.empty()) return std::nullopt;
    const int64_t channels = conv ? (dims.size() > 1 ? dims[1] : 0) : dims.back();
    Epilogue e;
    for (std::size_t i = 1; i < nodes.size(); ++i) {
      const Node& n = g_.node(nodes[i]);
      const Value& cur = g_.value(current);
      if (cur.consumers.size() != 1 || cur.consumers[0] != nodes[i] || cur.is_graph_output)
        return std::nullopt;
      if (n.outputs.size() != 1) return std::nullopt;
      if (n.op_type == "Relu" && !e.relu) {
        e.relu = true;
      } else if (n.op_type == "Add" && !e.relu && n.inputs.size() == 2) {
        const ValueId other = n.inputs[0] == current ? n.inputs[1] : n.inputs[0];
        if (other == current) return std::nullopt;
        const Value& ov = g_.value(other);
        if (ov.dtype != DType::Float32 || !ov.shape.is_static()) return std::nullopt;
        const auto od = ov.shape.static_dims();
        int64_t numel = 1;
        for (int64_t d : od) numel *= d;
        // A bias: `channels` values along the channel axis (Conv: [C,1,1] or [1,C,1,1];
        // MatMul: [N] or [1,..,N]).
        bool along_channel = numel == channels && !od.empty();
        if (along_channel && conv)
          along_channel = od.size() >= 3 && od[od.size() - 3] == channels &&
                          od[od.size() - 1] == 1 && od[od.size() - 2] == 1;
        if (along_channel && !conv) along_channel = od.back() == channels;
        if (along_channel && constant_data(g_, other) && e.bias == kNoValue && !conv_bias &&
            !gemm_bias) {
          e.bias = other;
        } else if (conv && od == dims && e.residual == kNoValue && !constant_data(g_, other)) {
          e.residual = other;
        } else {
          return std::nullopt;
        }
      } else {
        return std::nullopt;
      }
      current = n.outputs[0];
    }
    // cuDNN's fused form takes a residual only with an activation or bias around it; the
    // order is act(conv + bias + residual): a residual added after a Relu does not fit.
    return e;
  }

  void add_group(const FusionGroup& grp, int index) {
    GroupPlacement gp{grp.id, grp.pattern, "fused", "", "", 0};
    std::vector<NodeId> nodes = grp.node_ids;
    if (nodes.empty())
      for (const auto& name : grp.nodes) {
        const NodeId id = g_.find_node(name);
        if (id == kNoNode)
          throw Error("CUDA: group " + grp.id + " names node '" + name + "', not in the graph");
        nodes.push_back(id);
      }
    std::sort(nodes.begin(), nodes.end(),
              [&](NodeId a, NodeId b) { return position_[a] < position_[b]; });
    for (NodeId n : nodes) covered_.insert(n);
    const std::string& first = g_.node(nodes[0]).op_type;
    const bool anchor = first == "Conv" || first == "MatMul" || first == "Gemm";
    if (anchor && nodes.size() > 1) {
      if (auto e = folded_epilogue(nodes)) {
        Launch l = *node_launch(nodes[0]);
        l.name = grp.id;
        l.nodes = nodes;
        l.op_types.clear();
        for (NodeId n : nodes) l.op_types.push_back(g_.node(n).op_type);
        l.epilogue = *e;
        l.outputs = group_external_outputs(g_, nodes);
        if (e->bias != kNoValue) l.inputs.push_back(e->bias);
        if (e->residual != kNoValue) l.inputs.push_back(e->residual);
        l.group = index;
        gp.backend = std::string(launch_kind_name(l.kind)) + "+" + e->str();
        gp.launches = 1;
        add_unit({std::move(l)});
        plan_.groups.push_back(gp);
        return;
      }
    }
    std::string reason;
    std::optional<Pending> pd = lower_pending(g_, nodes, grp.id, 0, &reason);
    if (pd) {
      std::vector<Launch> ls;
      if (pd->anchor != kNoNode) ls.push_back(*node_launch(pd->anchor));
      for (NodeId m : pd->masks) add_node(m);
      std::vector<NodeId> body;
      for (NodeId n : nodes)
        if (n != pd->anchor && std::find(pd->masks.begin(), pd->masks.end(), n) == pd->masks.end())
          body.push_back(n);
      pd->lowered.entry = c_identifier("g" + std::to_string(plan_.generated.size()) + "-" + grp.id);
      ls.push_back(generated_launch(std::move(pd->lowered), body));
      for (auto& l : ls) l.group = index;
      gp.backend = ls.size() > 1 ? std::string(launch_kind_name(ls[0].kind)) + "+generated-cuda"
                                 : "generated-cuda";
      gp.launches = static_cast<int>(ls.size());
      add_unit(std::move(ls));
      plan_.groups.push_back(gp);
      return;
    }
    // Cut into parts that generate; the members left over run one kernel each.
    std::vector<Pending> parts = generated_parts(g_, nodes, grp.id);
    std::set<NodeId> done;
    for (auto& p : parts) {
      std::vector<Launch> ls;
      if (p.anchor != kNoNode) ls.push_back(*node_launch(p.anchor));
      for (NodeId m : p.masks) {
        add_node(m);
        done.insert(m);
      }
      std::vector<NodeId> body;
      for (NodeId n : p.nodes) {
        done.insert(n);
        if (n != p.anchor && std::find(p.masks.begin(), p.masks.end(), n) == p.masks.end())
          body.push_back(n);
      }
      p.lowered.entry =
          c_identifier("g" + std::to_string(plan_.generated.size()) + "-" + p.lowered.group_id);
      ls.push_back(generated_launch(std::move(p.lowered), body));
      for (auto& l : ls) l.group = index;
      gp.launches += static_cast<int>(ls.size());
      add_unit(std::move(ls));
    }
    for (NodeId n : nodes)
      if (!done.count(n)) add_node(n);
    gp.status = parts.empty() ? "fallback" : "fused";
    gp.backend = parts.empty() ? "" : "generated-cuda (" + std::to_string(parts.size()) + " parts)";
    gp.reason = reason;
    plan_.groups.push_back(gp);
  }

  void add_rest() {
    for (NodeId n : order_)
      if (!covered_.count(n)) add_node(n);
  }

  // Units in an order where every value is produced before it is read (groups are
  // convex, so one exists); ties follow the graph's topological order.
  void emit() {
    std::map<ValueId, int> producer;
    for (std::size_t u = 0; u < units_.size(); ++u)
      for (const auto& l : units_[u].launches)
        for (ValueId v : l.outputs) producer[v] = static_cast<int>(u);
    std::vector<std::set<int>> deps(units_.size());
    std::vector<std::vector<int>> users(units_.size());
    for (std::size_t u = 0; u < units_.size(); ++u)
      for (const auto& l : units_[u].launches)
        for (ValueId v : l.inputs) {
          auto it = producer.find(v);
          if (it != producer.end() && it->second != static_cast<int>(u) &&
              deps[u].insert(it->second).second)
            users[static_cast<std::size_t>(it->second)].push_back(static_cast<int>(u));
        }
    using Item = std::pair<int, int>;  // (first position, unit)
    std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
    std::vector<std::size_t> missing(units_.size());
    for (std::size_t u = 0; u < units_.size(); ++u) {
      missing[u] = deps[u].size();
      if (!missing[u]) ready.push({units_[u].first_position, static_cast<int>(u)});
    }
    std::size_t emitted = 0;
    while (!ready.empty()) {
      const int u = ready.top().second;
      ready.pop();
      ++emitted;
      for (auto& l : units_[static_cast<std::size_t>(u)].launches)
        plan_.launches.push_back(std::move(l));
      for (int w : users[static_cast<std::size_t>(u)])
        if (--missing[static_cast<std::size_t>(w)] == 0)
          ready.push({units_[static_cast<std::size_t>(w)].first_position, w});
    }
    if (emitted != units_.size())
      throw Error("CUDA: the fusion groups form a cycle; no launch order exists");
  }

 private:
  const Graph& g_;
  LaunchPlan& plan_;
  std::vector<NodeId> order_;
  std::vector<int> position_;
  std::set<NodeId> covered_;
  std::vector<Unit> units_;
};

}  // namespace

const char* launch_kind_name(LaunchKind k) {
  switch (k) {
    case LaunchKind::View: return "view";
    case LaunchKind::Conv: return "cudnn-conv";
    case LaunchKind::Pool: return "cudnn-pool";
    case LaunchKind::BatchNorm: return "cudnn-batchnorm";
    case LaunchKind::Matmul: return "cublaslt";
    case LaunchKind::Generated: return "generated-cuda";
    case LaunchKind::Copy: return "strided-copy";
    case LaunchKind::Gather: return "gather";
    case LaunchKind::Compare: return "compare";
  }
  return "?";
}

std::string Epilogue::str() const {
  std::string s;
  auto add = [&](const char* p) { s += (s.empty() ? "" : "+") + std::string(p); };
  if (bias != kNoValue) add("bias");
  if (residual != kNoValue) add("residual");
  if (relu) add("relu");
  return s;
}

int LaunchPlan::kernel_count() const {
  return static_cast<int>(launches.size()) - count(LaunchKind::View);
}

int LaunchPlan::count(LaunchKind k) const {
  return static_cast<int>(std::count_if(launches.begin(), launches.end(),
                                        [k](const Launch& l) { return l.kind == k; }));
}

int LaunchPlan::launch_of(NodeId node) const {
  for (std::size_t i = 0; i < launches.size(); ++i)
    if (std::find(launches[i].nodes.begin(), launches[i].nodes.end(), node) !=
        launches[i].nodes.end())
      return static_cast<int>(i);
  return -1;
}

std::vector<PlanStep> LaunchPlan::plan_steps() const {
  std::vector<PlanStep> steps;
  steps.reserve(launches.size());
  for (const auto& l : launches) {
    PlanStep s;
    s.inputs = l.inputs;
    s.outputs = l.outputs;
    s.aliases_input = l.kind == LaunchKind::View;
    steps.push_back(std::move(s));
  }
  return steps;
}

namespace {

// Generated kernels whose code is the same but for names and comments (a model's many
// Adds of one broadcast pattern) share the first one's entry: nvcc compiles each once.
void share_identical_kernels(LaunchPlan& plan) {
  std::map<std::string, std::string> entry_of_code;
  for (LoweredGroup& lg : plan.generated) {
    LoweredGroup key = lg;
    key.group_id.clear();
    key.node_names.clear();
    key.entry = "fx_key";
    for (KOp& op : key.ops) op.node.clear();
    const std::string code = emit_cuda_source({key});
    auto [it, fresh] = entry_of_code.emplace(code, lg.entry);
    if (!fresh) lg.entry = it->second;
  }
}

}  // namespace

std::vector<const LoweredGroup*> LaunchPlan::unique_generated() const {
  std::vector<const LoweredGroup*> out;
  std::set<std::string> seen;
  for (const LoweredGroup& lg : generated)
    if (seen.insert(lg.entry).second) out.push_back(&lg);
  return out;
}

LaunchPlan build_launch_plan(const Graph& graph, const std::vector<const FusionGroup*>& groups) {
  LaunchPlan plan;
  Builder b(graph, plan);
  for (std::size_t i = 0; i < groups.size(); ++i) b.add_group(*groups[i], static_cast<int>(i));
  b.add_rest();
  b.emit();
  share_identical_kernels(plan);
  return plan;
}

}  // namespace fx::cuda
