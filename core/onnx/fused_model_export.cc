// SPDX-License-Identifier: Apache-2.0
// Fused export on the proto level: the original ModelProto is copied, its stripped
// weights put back, Conv+BN pairs of a group folded, each group's NodeProtos moved into
// a FunctionProto and replaced by one call node, the nodes re-sorted topologically.

#include "onnx/fused_model_export.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "onnx/bn_fold.h"
#include "onnx/onnx_source.h"
#include "onnx/tensor_proto.h"
#include "util/error.h"

namespace fx {

namespace {

bool has_typed_data(const onnx::TensorProto& t) {
  return t.float_data_size() || t.int32_data_size() || t.int64_data_size() ||
         t.double_data_size() || t.uint64_data_size() || t.string_data_size();
}

// Puts back the bytes the importer left in the file (or in external data files).
void restore_initializers(const Graph& g, onnx::GraphProto& graph) {
  for (auto& t : *graph.mutable_initializer()) {
    if (!t.raw_data().empty() || has_typed_data(t)) continue;
    ValueId v = g.find_value(t.name());
    if (v == kNoValue || !g.value(v).is_constant()) continue;
    auto bytes = g.value(v).data->bytes();
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    t.set_raw_data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
}

// Names a node reads: its inputs and every name read inside its subgraphs (If
// branches, Loop/Scan bodies read values of this graph by name). A superset is
// fine: a subgraph's own names are never produced in this graph.
std::vector<std::string> reads_of(const onnx::NodeProto& n) {
  std::vector<std::string> out(n.input().begin(), n.input().end());
  auto walk = [&](const onnx::GraphProto& g, auto&& self) -> void {
    for (const auto& b : g.node()) {
      out.insert(out.end(), b.input().begin(), b.input().end());
      for (const auto& a : b.attribute()) {
        if (a.has_g()) self(a.g(), self);
        for (const auto& sg : a.graphs()) self(sg, self);
      }
    }
    for (const auto& o : g.output()) out.push_back(o.name());
  };
  for (const auto& a : n.attribute()) {
    if (a.has_g()) walk(a.g(), walk);
    for (const auto& sg : a.graphs()) walk(sg, walk);
  }
  return out;
}

void sort_nodes(onnx::GraphProto& graph) {
  const int n = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : graph.node(i).output()) producer[o] = i;
  std::vector<int> indeg(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<int>> users(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : reads_of(graph.node(i))) {
      auto it = producer.find(in);
      if (it != producer.end() && it->second != i) deps.insert(it->second);
    }
    indeg[static_cast<std::size_t>(i)] = static_cast<int>(deps.size());
    for (int d : deps) users[static_cast<std::size_t>(d)].push_back(i);
  }
  std::set<int> ready;  // ties by original index: the file order where possible
  for (int i = 0; i < n; ++i)
    if (indeg[static_cast<std::size_t>(i)] == 0) ready.insert(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int u : users[static_cast<std::size_t>(i)])
      if (--indeg[static_cast<std::size_t>(u)] == 0) ready.insert(u);
  }
  if (static_cast<int>(order.size()) != n)
    throw Error("fused export: the rewritten graph has a cycle");
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) *sorted.Add() = graph.node(i);
  graph.mutable_node()->Swap(&sorted);
}

std::string function_name(const std::string& id) {
  std::string s;
  for (char c : id) s += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return s;
}

// The canonical graph lost Identity nodes the proto still has (transforms/canonical.h):
// take them out of the proto as well, so that a group's members read each other there
// as they do in the graph (an Identity between two members would otherwise sit outside
// the function and make a cycle with it).
void drop_eliminated_identities(const LoadedModel& model, onnx::GraphProto& graph) {
  bool ran = false;
  for (const auto& p : model.canonical.passes)
    ran = ran || (p.pass == "identity-elimination" && p.nodes_removed > 0);
  if (!ran) return;
  std::set<std::string> outputs;
  for (const auto& o : graph.output()) outputs.insert(o.name());
  std::map<std::string, std::string> rename;
  auto* nodes = graph.mutable_node();
  for (int i = nodes->size() - 1; i >= 0; --i) {
    const auto& n = (*nodes)[i];
    if (n.op_type() != "Identity" || n.input_size() != 1 || n.output_size() != 1 ||
        outputs.count(n.output(0)) || model.graph.find_node(n.name()) != kNoNode ||
        model.graph.find_value(n.output(0)) != kNoValue)
      continue;
    rename[n.output(0)] = n.input(0);
    nodes->DeleteSubrange(i, 1);
  }
  auto resolve = [&](std::string v) {
    for (auto it = rename.find(v); it != rename.end(); it = rename.find(v)) v = it->second;
    return v;
  };
  for (auto& n : *nodes)
    for (int k = 0; k < n.input_size(); ++k) n.set_input(k, resolve(n.input(k)));
  auto* vi = graph.mutable_value_info();
  for (int i = vi->size() - 1; i >= 0; --i)
    if (rename.count((*vi)[i].name())) vi->DeleteSubrange(i, 1);
}

// The BatchNormalization nodes the canonical form folded into their Conv
// (conv-bn-folding): in the proto too, the Conv takes the folded weights and writes the
// BN's output, and the BN goes (the unfolded weights are dropped below when unused).
void mirror_folded_batch_norms(const LoadedModel& model, onnx::GraphProto& graph) {
  bool ran = false;
  for (const auto& p : model.canonical.passes)
    ran = ran || (p.pass == "conv-bn-folding" && p.nodes_removed > 0);
  if (!ran) return;
  const Graph& g = model.graph;
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& o : graph.node(i).output()) producer[o] = i;
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  std::vector<int> drop;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& bn = graph.node(i);
    if (bn.op_type() != "BatchNormalization" || bn.input_size() < 1 || bn.output_size() < 1 ||
        g.find_node(bn.name()) != kNoNode)
      continue;
    auto it = producer.find(bn.input(0));
    if (it == producer.end()) continue;
    onnx::NodeProto& conv = *graph.mutable_node(it->second);
    const NodeId c = g.find_node(conv.name());
    if (c == kNoNode || g.node(c).outputs.empty() ||
        g.value(g.node(c).outputs[0]).name != bn.output(0))
      continue;
    const Node& folded = g.node(c);
    for (std::size_t k = 0; k < folded.inputs.size(); ++k) {
      const Value& v = g.value(folded.inputs[k]);
      if (int(k) < conv.input_size())
        conv.set_input(int(k), v.name);
      else
        conv.add_input(v.name);
      if (v.is_constant() && !initializers.count(v.name)) {
        tensor_to_proto(*v.data, v.name, *graph.add_initializer());
        initializers.insert(v.name);
      }
    }
    conv.set_output(0, bn.output(0));
    drop.push_back(i);
  }
  for (auto it = drop.rbegin(); it != drop.rend(); ++it)
    graph.mutable_node()->DeleteSubrange(*it, 1);
}

// Folds Conv -> BN pairs that lie in one group; returns the BN names folded.
std::vector<std::string> fold_group_bns(const Graph& g, onnx::GraphProto& graph,
                                        std::vector<ExportGroup>& groups) {
  std::vector<std::string> folded;
  for (auto& grp : groups) {
    std::set<std::string> names(grp.nodes.begin(), grp.nodes.end());
    for (const auto& bn_name : grp.nodes) {
      NodeId bn = g.find_node(bn_name);
      if (bn == kNoNode || g.node(bn).op_type != "BatchNormalization") continue;
      const Node& b = g.node(bn);
      NodeId conv = g.value(b.inputs[0]).producer;
      if (conv == kNoNode || !names.count(g.node(conv).name)) continue;
      if (!conv_bn_fold_blocker(g, conv, bn).empty()) continue;
      const Node& c = g.node(conv);
      auto fl = [&](ValueId v) { return g.value(v).data->to_floats(); };
      bool has_bias = c.inputs.size() > 2 && c.inputs[2] != kNoValue;
      const auto& wdims = g.value(c.inputs[1]).data->dims();
      auto f = fold_bn_weights(fl(c.inputs[1]), wdims[0],
                               has_bias ? fl(c.inputs[2]) : std::vector<float>{}, fl(b.inputs[1]),
                               fl(b.inputs[2]), fl(b.inputs[3]), fl(b.inputs[4]),
                               b.attrs.get_float("epsilon", 1e-5f));
      std::string wn = c.name + ".folded_W", bnm = c.name + ".folded_B";
      tensor_to_proto(*TensorData::from_floats(wdims, f.weights), wn, *graph.add_initializer());
      tensor_to_proto(*TensorData::from_floats({wdims[0]}, f.bias), bnm, *graph.add_initializer());
      auto* nodes = graph.mutable_node();
      for (int i = 0; i < nodes->size(); ++i) {
        auto& np = *nodes->Mutable(i);
        if (np.name() != c.name) continue;
        while (np.input_size() < 3) np.add_input("");
        np.set_input(1, wn);
        np.set_input(2, bnm);
        np.set_output(0, g.value(b.outputs[0]).name);
      }
      for (int i = 0; i < nodes->size(); ++i) {
        if ((*nodes)[i].name() == bn_name) {
          nodes->DeleteSubrange(i, 1);
          break;
        }
      }
      folded.push_back(bn_name);
    }
    grp.nodes.erase(std::remove_if(grp.nodes.begin(), grp.nodes.end(),
                                   [&](const std::string& n) {
                                     return std::find(folded.begin(), folded.end(), n) !=
                                            folded.end();
                                   }),
                    grp.nodes.end());
  }
  // Drop initializers nothing reads any more (the unfolded weights, BN parameters).
  std::set<std::string> used;
  for (const auto& n : graph.node())
    for (const auto& in : reads_of(n)) used.insert(in);
  for (const auto& o : graph.output()) used.insert(o.name());
  auto* inits = graph.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i) {
    const std::string name = (*inits)[i].name();
    if (used.count(name)) continue;
    inits->DeleteSubrange(i, 1);
    auto* ins = graph.mutable_input();
    for (int k = ins->size() - 1; k >= 0; --k)
      if ((*ins)[k].name() == name) ins->DeleteSubrange(k, 1);
  }
  return folded;
}

}  // namespace

onnx::ModelProto build_fused_model(const LoadedModel& model,
                                   const std::vector<ExportGroup>& groups_in,
                                   FusedExportResult* result) {
  if (!model.source) throw Error("fused export: the model has no ONNX source to rewrite");
  FusedExportResult r;
  onnx::ModelProto m = model.source->proto;
  onnx::GraphProto& graph = *m.mutable_graph();
  r.nodes_before = graph.node_size();
  restore_initializers(model.graph, graph);
  drop_eliminated_identities(model, graph);
  mirror_folded_batch_norms(model, graph);
  std::vector<ExportGroup> groups = groups_in;
  r.folded_bn = fold_group_bns(model.graph, graph, groups);

  std::map<std::string, int64_t> opsets;
  for (const auto& o : m.opset_import()) opsets[o.domain()] = o.version();
  std::set<std::string> internal_values;
  for (const auto& grp : groups) {
    std::set<std::string> names(grp.nodes.begin(), grp.nodes.end());
    std::vector<int> idx;
    bool subgraph = false;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (!names.count(graph.node(i).name())) continue;
      idx.push_back(i);
      for (const auto& a : graph.node(i).attribute())
        subgraph = subgraph || a.has_g() || a.graphs_size();
    }
    if (idx.size() != names.size() || idx.empty()) {
      r.skipped.push_back(grp.id + ": not all of its nodes are in the model");
      continue;
    }
    if (subgraph) {
      r.skipped.push_back(grp.id + ": a member has a subgraph");
      continue;
    }
    std::set<std::string> produced;
    for (int i : idx)
      for (const auto& o : graph.node(i).output())
        if (!o.empty()) produced.insert(o);
    std::vector<std::string> ins, outs;
    for (int i : idx)
      for (const auto& in : graph.node(i).input())
        if (!in.empty() && !produced.count(in) &&
            std::find(ins.begin(), ins.end(), in) == ins.end())
          ins.push_back(in);
    std::set<std::string> read_outside;
    for (int i = 0; i < graph.node_size(); ++i)
      if (!names.count(graph.node(i).name()))
        for (const auto& in : reads_of(graph.node(i))) read_outside.insert(in);
    for (const auto& o : graph.output()) read_outside.insert(o.name());
    for (int i : idx)
      for (const auto& o : graph.node(i).output())
        if (!o.empty() && read_outside.count(o))
          outs.push_back(o);
        else if (!o.empty())
          internal_values.insert(o);
    onnx::FunctionProto& f = *m.add_functions();
    f.set_name(function_name(grp.id));
    f.set_domain(kFusionDomain);
    f.set_doc_string("Fusion Explorer group " + grp.id);
    for (const auto& s : ins) f.add_input(s);
    for (const auto& s : outs) f.add_output(s);
    std::set<std::string> body_domains;
    for (int i : idx) {
      *f.add_node() = graph.node(i);
      body_domains.insert(graph.node(i).domain() == "ai.onnx" ? "" : graph.node(i).domain());
    }
    for (const auto& d : body_domains) {
      auto* os = f.add_opset_import();
      os->set_domain(d);
      os->set_version(opsets.count(d) ? opsets[d] : 1);
    }
    onnx::NodeProto call;
    call.set_name(grp.id);
    call.set_op_type(f.name());
    call.set_domain(kFusionDomain);
    for (const auto& s : ins) call.add_input(s);
    for (const auto& s : outs) call.add_output(s);
    // Replace the members by the call (at the first member's place; sorted below).
    auto* nodes = graph.mutable_node();
    *nodes->Mutable(idx[0]) = call;
    for (auto it = idx.rbegin(); it != idx.rend() - 1; ++it) nodes->DeleteSubrange(*it, 1);
    ++r.functions;
  }
  sort_nodes(graph);
  // value_info of values that now live inside a function body.
  auto* vi = graph.mutable_value_info();
  for (int i = vi->size() - 1; i >= 0; --i)
    if (internal_values.count((*vi)[i].name())) vi->DeleteSubrange(i, 1);
  if (r.functions > 0) {
    if (m.ir_version() < 8) m.set_ir_version(8);
    auto* os = m.add_opset_import();
    os->set_domain(kFusionDomain);
    os->set_version(1);
  }
  r.nodes_after = graph.node_size();
  if (result) *result = r;
  return m;
}

FusedExportResult export_fused_model(const LoadedModel& model,
                                     const std::vector<ExportGroup>& groups,
                                     const std::string& out_path, std::size_t external_threshold) {
  FusedExportResult r;
  onnx::ModelProto m = build_fused_model(model, groups, &r);
  if (m.ByteSizeLong() > external_threshold) {
    // Large initializers to "<out>.data", next to the model (ONNX external data).
    std::string data_path = out_path + ".data";
    std::string location = data_path.substr(data_path.find_last_of('/') + 1);
    std::ofstream data(data_path, std::ios::binary);
    if (!data) throw FileError(data_path, "cannot write external data");
    int64_t offset = 0;
    for (auto& t : *m.mutable_graph()->mutable_initializer()) {
      if (t.raw_data().size() < 1024) continue;
      data.write(t.raw_data().data(), static_cast<std::streamsize>(t.raw_data().size()));
      auto add = [&](const std::string& k, const std::string& v) {
        auto* e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", location);
      add("offset", std::to_string(offset));
      add("length", std::to_string(t.raw_data().size()));
      offset += static_cast<int64_t>(t.raw_data().size());
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      t.clear_raw_data();
    }
    if (!data) throw FileError(data_path, "writing external data failed");
    r.external_data = true;
  }
  std::ofstream out(out_path, std::ios::binary);
  if (!out || !m.SerializeToOstream(&out))
    throw FileError(out_path, "cannot write the fused model");
  return r;
}

int inline_local_functions(onnx::ModelProto& model) {
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> fns;
  for (const auto& f : model.functions()) fns[{f.domain(), f.name()}] = &f;
  auto& graph = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  int inlined = 0;
  for (const auto& n : graph.node()) {
    auto it = fns.find({n.domain(), n.op_type()});
    if (it == fns.end()) {
      *out.Add() = n;
      continue;
    }
    const onnx::FunctionProto& f = *it->second;
    std::map<std::string, std::string> rename;
    for (int i = 0; i < f.input_size(); ++i)
      rename[f.input(i)] = i < n.input_size() ? n.input(i) : "";
    for (int i = 0; i < f.output_size(); ++i)
      rename[f.output(i)] = i < n.output_size() ? n.output(i) : "";
    // Foreign functions may reuse names: their internals get the call's name as prefix.
    const bool ours = f.domain() == kFusionDomain;
    auto map = [&](const std::string& s) {
      if (s.empty()) return s;
      auto r = rename.find(s);
      if (r != rename.end()) return r->second;
      return ours ? s : n.name() + "/" + s;
    };
    for (const auto& b : f.node()) {
      onnx::NodeProto c = b;
      for (int i = 0; i < c.input_size(); ++i) c.set_input(i, map(c.input(i)));
      for (int i = 0; i < c.output_size(); ++i) c.set_output(i, map(c.output(i)));
      *out.Add() = c;
    }
    ++inlined;
  }
  graph.mutable_node()->Swap(&out);
  model.clear_functions();
  auto* os = model.mutable_opset_import();
  for (int i = os->size() - 1; i >= 0; --i)
    if ((*os)[i].domain() == kFusionDomain) os->DeleteSubrange(i, 1);
  return inlined;
}

}  // namespace fx
