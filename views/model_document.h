// SPDX-License-Identifier: Apache-2.0
#pragma once
// Everything the window shows about one opened model, built off the UI thread:
// the graph, its scope hierarchy, the layout engine, and the fusion analysis with the
// plan the user edits. The views read it; only the UI thread mutates the plan, and
// only one layout job at a time touches `layout` (see DocumentController).

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

#include "analysis/analysis_result.h"
#include "analysis/cost_model.h"
#include "analysis/fusion_plan.h"
#include "drawing/hierarchical_layout.h"
#include "onnx/model_loader.h"

namespace fx::views {

struct AnalysisSettings {
  QString device = QStringLiteral("cpu-host");  // preset name or profile path
  int opt_level = 2;
  double threshold = 0.30;
  // Symbolic dims the user bound (the dims panel); the others are assumed at open.
  std::map<std::string, int64_t> dims;
};

// A node of the model as exported that the canonical form removed by folding it into
// another (a BatchNormalization into the weights of the Conv before it).
struct FoldedNode {
  std::string name;
  std::string op_type;
  std::string pass;
};

struct ModelDocument {
  QString path;
  LoadedModel model;
  std::unique_ptr<drawing::ScopeTree> tree;
  std::unique_ptr<drawing::HierarchicalLayout> layout;
  std::unique_ptr<CostModel> cost;  // per-node bytes/FLOPs for the overlays
  std::optional<AnalysisResult> analysis;
  FusionPlan plan;
  AnalysisSettings settings;
  QString analysis_error;  // why `analysis` is empty, when it is
  double load_ms = 0, analysis_ms = 0, tree_ms = 0;

  const Graph& graph() const { return model.graph; }
  // What the scene draws (tree and layout are built on it): the graph itself, or when
  // it has If/Loop/Scan a copy with their subgraphs inlined after the model's nodes
  // (drawing/subgraph_groups.h). NodeIds below graph().node_count() are the model's
  // and index the cost, plan and analysis; the others are body nodes, drawn only.
  std::unique_ptr<Graph> drawn;
  const Graph& drawn_graph() const { return drawn ? *drawn : model.graph; }
  bool is_model_node(NodeId n) const { return n >= 0 && std::size_t(n) < graph().node_count(); }
  // After shapes were inferred into graph(): the drawn copy's values of the model take
  // the same types (the edges' labels and bytes).
  void refresh_drawn_types();
  // Index of the plan group holding the node, or -1.
  int group_of_node(NodeId n) const;
  void rebuild_node_groups();   // after the plan changed its groups (load)
  int64_t parameter_bytes = 0;  // graph().parameter_bytes(), once (the status bar shows it)
  // The graph is fxc's canonical graph: read again with shapes and shape-folding
  // (DocumentController swaps it in after the first paint). Until then shape-folding is
  // off (load_options), and a child fxc is told so.
  bool shapes_folded = false;
  // How this document's graph was read (explorer_load_options, shape-folding on once
  // shapes_folded): a child fxc or a probe reads the model with these.
  LoadOptions load_options() const;
  // The nodes canonicalization folded into the node named `node` (none: empty).
  const std::vector<FoldedNode>& folded_into(const std::string& node) const;
  // Node name -> what was folded into it, from model.canonical (open_document).
  std::map<std::string, std::vector<FoldedNode>> folded_;

  std::vector<int> node_group_;  // NodeId -> plan group index
};

// How the explorer reads a model (open_document): unbound dims assumed, the user's
// bound, the canonical passes as fxc runs them but shape-folding (shapes come later).
LoadOptions explorer_load_options(const AnalysisSettings& settings);
// How it reads the model again once the first paint is up: as fxc reads it, with shapes
// and every canonical pass (shape-folding included).
LoadOptions explorer_folded_load_options(const AnalysisSettings& settings);
// The same as fxc options (--dim, --disable-pass, --enable-pass, --no-canonicalize),
// for a child fxc that must read the model as the window did: the plan names its nodes.
QStringList model_arguments(const LoadOptions& options);

// Steps reported while opening, for the progress bar.
enum class OpenStep { Parsing, Hierarchy, Analysis, Layout, Done };
QString open_step_text(OpenStep step);

// Opening a model, one step after another; `cancelled` is polled between steps
// (a step itself is not interrupted). Throws fx::Error for a bad model.
// The document comes back without shapes and without analysis, which is enough to
// lay out and paint its outline and takes a fraction of the time on big models
// (ONNX shape inference and the analysis are most of it): the window paints it, then
// runs infer_value_types (onnx/model_loader.h) and run_analysis in workers.
struct OpenCallbacks {
  std::function<void(OpenStep)> step;
  std::function<bool()> cancelled;
};
// Builds the drawn graph, doc.tree and doc.layout again: constants (weights and Constant
// ops) as nodes of their own (drawing/weight_nodes.h), or folded into the boxes of the
// ops that use them (drawing/scope_tree.h).
void rebuild_hierarchy(ModelDocument& doc, bool constants_as_nodes,
                       const drawing::LabelMetrics& metrics);

std::shared_ptr<ModelDocument> open_document(const QString& path, const AnalysisSettings& settings,
                                             const drawing::LabelMetrics& metrics,
                                             const OpenCallbacks& callbacks);

// The model read again as fxc reads it (explorer_folded_load_options), in a worker after
// the first paint. Shape inference runs here (in place of infer_value_types), and
// shape-folding with it: when that removed nodes (Shape -> ... -> Reshape chains), the
// result is a new document to swap in (its hierarchy built with `constants_as_nodes`,
// laid out with its initial expansion); when the nodes are the document's own, only the
// inferred types, applied in place. Throws fx::Error when the model cannot be read with
// shapes (the caller falls back to infer_value_types).
struct FoldedReading {
  std::shared_ptr<ModelDocument> doc;  // set: swap it in
  std::shared_ptr<drawing::SceneLayout> layout;
  InferredTypes types;  // when doc is null
};
FoldedReading read_with_shapes(const ModelDocument& doc, bool constants_as_nodes,
                               const drawing::LabelMetrics& metrics);
// The expansion of `to` that opens the groups open in `from` (matched by their names
// from the root), the others as initial_expansion opens them.
drawing::Expansion carry_expansion(const drawing::ScopeTree& from, const drawing::Expansion& open,
                                   const drawing::ScopeTree& to);

// The analysis of a graph, computed in a worker and then applied to the document on
// the UI thread (the views read the document meanwhile).
struct AnalysisOutput {
  AnalysisSettings settings;
  std::unique_ptr<CostModel> cost;
  std::optional<AnalysisResult> analysis;
  FusionPlan plan;
  QString error;  // set when the analysis failed (a bad device profile, ...)
  double ms = 0;
  std::vector<int> node_group;  // NodeId -> plan group index (ModelDocument::node_group_)
};
// Never throws: a failure is reported in AnalysisOutput::error. `assumed`: the dims the
// model was read with by the default rule; the model is read and analysed once more with
// every one of them at kAssumedProbeFactor times its value (one reading, however many
// dims), and a group legal only at the assumed values carries the note
// (analysis/assumed_legality.h). `shapes_folded`: the graph is the document's after
// shape-folding (ModelDocument::shapes_folded); the probe and the plan say so.
std::shared_ptr<AnalysisOutput> run_analysis(
    const Graph& graph, const QString& model_path, const AnalysisSettings& settings,
    const std::vector<transforms::AssumedDim>& assumed = {}, bool shapes_folded = false);
// The nodes canonicalization folded into others, by the name of the node that now
// computes them.
std::map<std::string, std::vector<FoldedNode>> folded_nodes(
    const transforms::CanonicalRecord& record);
void apply_analysis(ModelDocument& doc, AnalysisOutput&& out);

}  // namespace fx::views

Q_DECLARE_METATYPE(fx::views::AnalysisSettings)
