// SPDX-License-Identifier: Apache-2.0
#include "views/model_document.h"

#include <QObject>

#include "analysis/assumed_legality.h"
#include "analysis/fusion_finder.h"
#include "calibration/host_device.h"
#include "codegen/group_kernels.h"
#include "drawing/subgraph_groups.h"
#include "drawing/weight_nodes.h"
#include "ir/subgraph.h"
#include "onnx/model_loader.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace fx::views {

QString open_step_text(OpenStep step) {
  switch (step) {
    case OpenStep::Parsing: return QObject::tr("Reading the model");
    case OpenStep::Hierarchy: return QObject::tr("Grouping by name scope");
    case OpenStep::Analysis: return QObject::tr("Finding fusions");
    case OpenStep::Layout: return QObject::tr("Laying out the graph");
    case OpenStep::Done: return QObject::tr("Done");
  }
  return {};
}

void ModelDocument::refresh_drawn_types() {
  if (!drawn) return;
  const Graph& g = graph();
  for (std::size_t i = 0; i < g.value_count() && i < drawn->value_count(); ++i) {
    drawn->value(ValueId(i)).dtype = g.value(ValueId(i)).dtype;
    drawn->value(ValueId(i)).shape = g.value(ValueId(i)).shape;
  }
  for (std::size_t i = 0; i < g.node_count() && i < drawn->node_count(); ++i)
    drawn->node(NodeId(i)).shape_unknown = g.node(NodeId(i)).shape_unknown;
}

const std::vector<FoldedNode>& ModelDocument::folded_into(const std::string& node) const {
  static const std::vector<FoldedNode> none;
  const auto it = folded_.find(node);
  return it == folded_.end() ? none : it->second;
}

std::map<std::string, std::vector<FoldedNode>> folded_nodes(
    const transforms::CanonicalRecord& record) {
  std::map<std::string, std::vector<FoldedNode>> out;
  for (const auto& p : record.passes)
    for (const auto& [removed, into] : p.folded_into)
      // conv-bn-folding is the one pass that folds a node into another.
      out[into].push_back({removed, "BatchNormalization", p.pass});
  return out;
}

int ModelDocument::group_of_node(NodeId n) const {
  if (n < 0 || std::size_t(n) >= node_group_.size()) return -1;
  return node_group_[std::size_t(n)];
}

namespace {
bool has_control_flow(const Graph& graph) {
  for (const Node& n : graph.nodes())
    if (has_subgraphs(n)) return true;
  return false;
}

std::vector<int> node_groups(const Graph& graph, const FusionPlan& plan) {
  std::vector<int> out(graph.node_count(), -1);
  const auto& groups = plan.groups();
  for (std::size_t i = 0; i < groups.size(); ++i)
    for (const std::string& name : groups[i].nodes) {
      const NodeId n = graph.find_node(name);
      if (n != kNoNode) out[std::size_t(n)] = int(i);
    }
  return out;
}
}  // namespace

void ModelDocument::rebuild_node_groups() {
  node_group_ = node_groups(graph(), plan);
}

namespace {
// Every assumed dim at its probe value in one reading, read as the explorer reads the
// model (with shapes): the groups legal only at the assumed values
// (analysis/assumed_legality.h).
AssumedNotes probe_assumed_dims(const QString& model_path, const AnalysisSettings& settings,
                                bool shapes_folded,
                                const std::vector<transforms::AssumedDim>& assumed,
                                const DeviceProfile& profile, const FusionOptions& options,
                                const AnalysisResult& r) {
  LoadOptions lo =
      shapes_folded ? explorer_folded_load_options(settings) : explorer_load_options(settings);
  lo.infer_shapes = true;
  std::vector<AssumedProbe> dims;
  for (const auto& a : assumed) {
    if (settings.dims.count(a.symbol)) continue;  // bound by the user since
    dims.push_back({a.symbol, a.value, a.value * kAssumedProbeFactor});
    lo.dims[a.symbol] = dims.back().probe;
  }
  AssumedNotes notes;
  if (dims.empty()) return notes;
  try {
    const LoadedModel at_probe = load_onnx(model_path.toStdString(), lo);
    note_assumed_legality(r, dims, analyze_fusion(at_probe.graph, profile, options), notes);
  } catch (const Error&) {
    // A model that cannot be read at the probe values gets no note (fxc says the same).
  }
  return notes;
}
}  // namespace

std::shared_ptr<AnalysisOutput> run_analysis(const Graph& graph, const QString& model_path,
                                             const AnalysisSettings& settings,
                                             const std::vector<transforms::AssumedDim>& assumed,
                                             bool shapes_folded) {
  auto out = std::make_shared<AnalysisOutput>();
  out->settings = settings;
  Stopwatch watch;
  try {
    DeviceProfile profile = resolve_device(settings.device.toStdString(), graph);
    out->cost = std::make_unique<CostModel>(graph, profile);
    FusionOptions options;
    options.opt_level = settings.opt_level;
    options.threshold = settings.threshold;
    use_generated_kernels(options);  // launches as Generate shows the groups
    out->analysis = analyze_fusion(graph, profile, options);
    if (!assumed.empty())
      apply_assumed_notes(out->analysis->groups,
                          probe_assumed_dims(model_path, settings, shapes_folded, assumed, profile,
                                             options, *out->analysis));
    out->plan = FusionPlan(*out->analysis, model_path.toStdString());
    // So that fxc, given this plan, reads the model as the explorer did.
    const auto disabled =
        (shapes_folded ? explorer_folded_load_options(settings) : explorer_load_options(settings))
            .canonical.disabled;
    out->plan.set_disabled_passes({disabled.begin(), disabled.end()});
    out->node_group = node_groups(graph, out->plan);  // here, not on the UI thread
  } catch (const Error& e) {
    // The graph is still worth looking at: keep it and say why candidates are missing.
    out->analysis.reset();
    out->plan = FusionPlan();
    out->node_group.assign(graph.node_count(), -1);
    out->error = QString::fromStdString(e.what());
  }
  out->ms = watch.elapsed_ms();
  return out;
}

void apply_analysis(ModelDocument& doc, AnalysisOutput&& out) {
  doc.settings = out.settings;
  if (out.cost) doc.cost = std::move(out.cost);
  doc.analysis = std::move(out.analysis);
  doc.plan = std::move(out.plan);
  doc.analysis_error = out.error;
  doc.analysis_ms = out.ms;
  if (out.node_group.size() == doc.graph().node_count())
    doc.node_group_ = std::move(out.node_group);
  else
    doc.rebuild_node_groups();
}

LoadOptions explorer_load_options(const AnalysisSettings& settings) {
  LoadOptions options;
  options.infer_shapes = false;  // after the first paint (see the header)
  // As the commands read it: unbound dims assumed, canonical form. Shape folding is
  // disabled by name: shapes come after the first paint, so it would fold nothing, and
  // a child fxc told so (model_arguments) reads the same nodes the plan names.
  options.assume_dims = true;
  options.canonical.enabled = true;
  // BatchNormalization after a Conv is folded as fxc folds it, so that the explorer's
  // groups and numbers are fxc's; the drawing shows each folded BN on its Conv
  // (ModelDocument::folded_into).
  options.canonical.disabled = {"shape-folding"};
  options.dims = settings.dims;
  return options;
}

LoadOptions explorer_folded_load_options(const AnalysisSettings& settings) {
  LoadOptions options = explorer_load_options(settings);
  options.infer_shapes = true;
  options.canonical.disabled.erase("shape-folding");
  return options;
}

LoadOptions ModelDocument::load_options() const {
  return shapes_folded ? explorer_folded_load_options(settings) : explorer_load_options(settings);
}

QStringList model_arguments(const LoadOptions& options) {
  QStringList args;
  for (const auto& [name, value] : options.dims)
    args << QStringLiteral("--dim")
         << QString::fromStdString(name) + QLatin1Char('=') + QString::number(value);
  if (!options.canonical.enabled) return args << QStringLiteral("--no-canonicalize");
  // Against what fxc does with no pass options (every pass on).
  const auto defaults = command_load_options({}, {}, false).canonical.disabled;
  for (const auto& p : transforms::canonical_pass_names()) {
    const bool off = options.canonical.disabled.count(p) > 0,
               off_by_default = defaults.count(p) > 0;
    if (off && !off_by_default)
      args << QStringLiteral("--disable-pass") << QString::fromStdString(p);
    if (!off && off_by_default)
      args << QStringLiteral("--enable-pass") << QString::fromStdString(p);
  }
  return args;
}

namespace {
// A document of a model read: the drawn graph (bodies inlined when there is control
// flow), its scope tree and layout engine, what canonicalization folded; no analysis.
std::shared_ptr<ModelDocument> document_of(const QString& path, LoadedModel&& model,
                                           const AnalysisSettings& settings,
                                           const drawing::LabelMetrics& metrics) {
  auto doc = std::make_shared<ModelDocument>();
  doc->path = path;
  doc->model = std::move(model);
  Stopwatch watch;
  if (has_control_flow(doc->graph()))
    doc->drawn = std::make_unique<Graph>(drawing::inline_subgraphs_for_drawing(doc->graph()));
  doc->tree = std::make_unique<drawing::ScopeTree>(doc->drawn_graph());
  doc->layout =
      std::make_unique<drawing::HierarchicalLayout>(doc->drawn_graph(), *doc->tree, metrics);
  doc->tree_ms = watch.elapsed_ms();
  doc->settings = settings;
  doc->parameter_bytes = doc->graph().parameter_bytes();
  doc->folded_ = folded_nodes(doc->model.canonical);
  doc->rebuild_node_groups();
  return doc;
}
}  // namespace

std::shared_ptr<ModelDocument> open_document(const QString& path, const AnalysisSettings& settings,
                                             const drawing::LabelMetrics& metrics,
                                             const OpenCallbacks& cb) {
  auto step = [&](OpenStep s) {
    if (cb.step) cb.step(s);
  };
  auto cancelled = [&] { return cb.cancelled && cb.cancelled(); };
  step(OpenStep::Parsing);
  Stopwatch watch;
  LoadedModel model = load_onnx(path.toStdString(), explorer_load_options(settings));
  const double load_ms = watch.elapsed_ms();
  if (cancelled()) return nullptr;
  step(OpenStep::Hierarchy);
  auto doc = document_of(path, std::move(model), settings, metrics);
  doc->load_ms = load_ms;
  if (cancelled()) return nullptr;
  return doc;
}

namespace {
// Same nodes in the same order, reading and writing the same values by name: the
// document's tree and layout hold for the other graph.
bool same_nodes(const Graph& a, const Graph& b) {
  if (a.node_count() != b.node_count() || a.value_count() != b.value_count()) return false;
  auto names = [](const Graph& g, const std::vector<ValueId>& ids) {
    std::vector<std::string> out;
    for (ValueId v : ids) out.push_back(v == kNoValue ? std::string() : g.value(v).name);
    return out;
  };
  for (std::size_t i = 0; i < a.node_count(); ++i) {
    const Node &x = a.node(NodeId(i)), &y = b.node(NodeId(i));
    if (x.name != y.name || x.op_type != y.op_type || names(a, x.inputs) != names(b, y.inputs) ||
        names(a, x.outputs) != names(b, y.outputs))
      return false;
  }
  return true;
}

// The group's names from the root down ("layer1/0/conv1"): what identifies a group
// across two trees of nearly the same graph.
std::string group_key(const drawing::ScopeTree& tree, drawing::GroupId g) {
  std::string key;
  for (; g != drawing::kRootGroup && g != drawing::kNoGroup; g = tree.group(g).parent)
    key = tree.group(g).name + "\n" + key;
  return key;
}
}  // namespace

drawing::Expansion carry_expansion(const drawing::ScopeTree& from, const drawing::Expansion& open,
                                   const drawing::ScopeTree& to) {
  std::map<std::string, bool> was_open;
  for (std::size_t g = 1; g < from.group_count() && g < open.size(); ++g)
    was_open[group_key(from, drawing::GroupId(g))] = open.is_open(drawing::GroupId(g));
  drawing::Expansion out = drawing::initial_expansion(to);
  for (std::size_t g = 1; g < to.group_count(); ++g) {
    const auto it = was_open.find(group_key(to, drawing::GroupId(g)));
    if (it != was_open.end()) out.set_open(drawing::GroupId(g), it->second);
  }
  return out;
}

FoldedReading read_with_shapes(const ModelDocument& doc, bool constants_as_nodes,
                               const drawing::LabelMetrics& metrics) {
  Stopwatch watch;
  LoadedModel model = load_onnx(doc.path.toStdString(), explorer_folded_load_options(doc.settings));
  FoldedReading out;
  if (same_nodes(doc.graph(), model.graph)) {
    // Nothing folded: the shapes by value name, written into the document in place.
    const Graph& g = model.graph;
    for (std::size_t i = 0; i < g.value_count(); ++i) {
      const Value& v = g.value(ValueId(i));
      if (v.dtype != DType::Undefined || v.shape.rank_known())
        out.types.entries.push_back({doc.graph().find_value(v.name), v.dtype, v.shape});
    }
    std::erase_if(out.types.entries, [](const auto& e) { return e.value == kNoValue; });
    out.types.ms = watch.elapsed_ms();
    return out;
  }
  const double ms = watch.elapsed_ms();
  model.info.shape_inference_ms = ms;  // the whole second reading: what the user waited
  out.doc = document_of(doc.path, std::move(model), doc.settings, metrics);
  out.doc->load_ms = doc.load_ms;
  out.doc->shapes_folded = true;
  if (constants_as_nodes) rebuild_hierarchy(*out.doc, true, metrics);
  out.layout = std::make_shared<drawing::SceneLayout>(
      out.doc->layout->compute(drawing::initial_expansion(*out.doc->tree)));
  return out;
}

void rebuild_hierarchy(ModelDocument& doc, bool constants_as_nodes,
                       const drawing::LabelMetrics& metrics) {
  drawing::ScopeTreeOptions options;
  options.fold_constants = !constants_as_nodes;
  doc.layout.reset();  // it refers to the old tree and graph
  doc.tree.reset();
  // The drawn graph: bodies inlined when there is control flow, and weights as nodes of
  // their own when asked (both only ever append nodes: model ids stay).
  const bool control_flow = has_control_flow(doc.graph());
  if (constants_as_nodes)
    doc.drawn = std::make_unique<Graph>(drawing::with_weight_nodes(
        control_flow ? drawing::inline_subgraphs_for_drawing(doc.graph()) : doc.graph()));
  else if (control_flow)
    doc.drawn = std::make_unique<Graph>(drawing::inline_subgraphs_for_drawing(doc.graph()));
  else
    doc.drawn.reset();
  doc.tree = std::make_unique<drawing::ScopeTree>(doc.drawn_graph(), options);
  doc.layout = std::make_unique<drawing::HierarchicalLayout>(doc.drawn_graph(), *doc.tree, metrics);
}

}  // namespace fx::views
