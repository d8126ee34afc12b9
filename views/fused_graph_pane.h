// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused graph beside the original: the document's accepted groups contracted
// into one kernel node each (core: analysis/fused_graph.h), laid out off the UI thread
// in its own scene and view. Selection is synchronised with the original graph by the
// window: a kernel clicked here names the plan group it replaced (kernel_selected), an
// unfused node names its original (original_selected); show_original/show_plan_group
// go the other way and select, reveal and centre the fused node.

#include <QFutureWatcher>
#include <QWidget>

#include <memory>
#include <vector>

#include "analysis/fused_graph.h"
#include "drawing/visible_graph.h"
#include "views/model_document.h"

class QLabel;

namespace fx::views {

class GraphScene;
class GraphView;

class FusedGraphPane : public QWidget {
  Q_OBJECT
 public:
  explicit FusedGraphPane(QWidget* parent = nullptr);
  ~FusedGraphPane() override;

  // Rebuilds from the original document's accepted groups (copied: the worker never
  // reads the live plan). A null document clears the pane.
  void set_source(std::shared_ptr<ModelDocument> original, const drawing::LabelMetrics& metrics);
  bool is_busy() const { return job_.isRunning() || layout_job_.isRunning(); }
  void set_dark(bool dark);

  GraphScene* scene() const { return scene_; }
  GraphView* view() const { return view_; }
  // The fused graph shown (null before the first build).
  const FusedGraph* fused() const { return fused_.get(); }
  const ModelDocument* document() const { return doc_.get(); }
  // Fused node of the original node / of the plan group's kernel, or kNoNode.
  NodeId fused_node_of(NodeId original) const;
  NodeId kernel_of_plan_group(int plan_group) const;
  int plan_group_of(NodeId fused) const;
  // The original nodes a fused node stands for (a kernel: its group's members).
  std::vector<NodeId> originals_of(NodeId fused) const;
  // The original document the shown fused graph was built from (null before the first
  // build); compared, never dereferenced.
  const ModelDocument* source() const { return source_; }

  void show_original(NodeId original);
  void show_plan_group(int plan_group);
  void select_fused(NodeId fused);  // selects, opening groups when it is folded away

 signals:
  void kernel_selected(int plan_group);
  void original_selected(fx::NodeId original);
  void shown();        // a fused graph (or its relayout) is on screen
  void graph_built();  // a new fused graph is on screen (just before `shown`)

 private:
  struct Built;
  void start_layout();
  void on_built();
  void on_layout_finished();

  std::shared_ptr<ModelDocument> doc_;  // the fused graph as a document
  const ModelDocument* source_ = nullptr;
  std::shared_ptr<FusedGraph> fused_;
  QString plan_counts_;          // "N kernels (A of G groups accepted)", from the source's plan
  std::vector<int> plan_group_;  // fused node -> plan group index, or -1
  drawing::Expansion expansion_;
  NodeId focus_ = kNoNode;
  bool rebuild_pending_ = false;
  std::shared_ptr<ModelDocument> pending_source_;
  drawing::LabelMetrics metrics_;
  GraphScene* scene_;
  GraphView* view_;
  QLabel* caption_;
  QFutureWatcher<std::shared_ptr<Built>> job_;
  QFutureWatcher<std::shared_ptr<drawing::SceneLayout>> layout_job_;
};

}  // namespace fx::views
