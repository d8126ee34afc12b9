// SPDX-License-Identifier: Apache-2.0
#pragma once
// The graph of one document as Qt items: builds BoxItem/EdgeItem/HullItem from a
// SceneLayout computed elsewhere (never lays out itself), recolours for overlays and
// plan changes, and turns clicks into signals the window routes to the inspector,
// the candidate table and the expansion state.

#include <QFont>
#include <QGraphicsScene>
#include <QHash>
#include <QPainterPath>

#include <memory>
#include <unordered_set>
#include <vector>

#include "drawing/hierarchical_layout.h"
#include "views/model_document.h"

namespace fx::views {

class BoxItem;
class EdgeItem;
class HullItem;

enum class Overlay { None, Bytes, Flops };

// Box sizes for the layout, from the font the scene paints with (group titles are bold).
drawing::LabelMetrics label_metrics(const QFont& font);

class GraphScene : public QGraphicsScene {
  Q_OBJECT
 public:
  explicit GraphScene(QObject* parent = nullptr);
  // Removes the items while this class is whole: ~QGraphicsScene would otherwise emit
  // selectionChanged into on_selection_changed after this part is destroyed (UBSan).
  ~GraphScene() override;

  void set_document(std::shared_ptr<ModelDocument> doc);
  // Replaces every item with the given layout (the document's current expansion).
  void show_layout(const drawing::SceneLayout& layout);
  const drawing::SceneLayout& current_layout() const { return layout_; }
  void set_dark(bool dark);
  void set_overlay(Overlay overlay);
  Overlay overlay() const { return overlay_; }
  // Largest overlay value on screen (the legend's top), 0 when no overlay.
  double overlay_max() const { return overlay_max_; }
  // Redraws the fusion hulls and internal edges after the plan changed.
  void refresh_fusion();
  // Selects the hull of a plan group (and nothing else); -1 clears.
  void select_fusion_group(int plan_group);
  void select_node(NodeId n);
  // Marks boxes whose node name or op type contains `text` (or those of a node
  // canonicalization folded into it, such as a BN into its Conv); returns the matching
  // nodes in topological order (all of them, visible or not).
  std::vector<NodeId> search(const QString& text);
  BoxItem* box_of_node(NodeId n) const;
  int box_count() const { return int(boxes_.size()); }
  // Navigation sync between two views (original | fused): the closed box nearest to a
  // scene point (one containing it first), -1 when none; a node the box shows (the op,
  // or the first node below a closed group); the layout rectangle of a box, and of the
  // closed box showing a node (empty when it is not on screen).
  int closed_box_near(const QPointF& p) const;
  NodeId node_of_box(int box) const;
  QRectF box_rect(int box) const;
  QRectF node_rect(NodeId n) const;

 signals:
  void node_selected(fx::NodeId node);
  void group_box_selected(int group);  // a scope/repeat/artificial group box
  void fusion_group_selected(int plan_group);
  void toggle_requested(int group);
  // Double-click on an op whose box lists constant inputs: show them as nodes.
  void constants_requested(fx::NodeId node);
  void nothing_selected();  // a click on the background  // double-click on a group box or frame

 protected:
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

 private:
  void on_selection_changed();
  void apply_overlay();
  QString edge_label(const drawing::SceneEdge& e) const;
  // The shorter form tried where the full label has no room (EdgeItem::place_label).
  QString edge_short_label(const drawing::SceneEdge& e) const;
  // Puts the edges' shape labels where they cover no box, title bar, edge or other
  // label.
  void place_labels();
  // The outline of a fusion group over the given (closed) scene boxes.
  QPainterPath hull_outline(const std::unordered_set<int>& shown) const;

  std::shared_ptr<ModelDocument> doc_;
  drawing::SceneLayout layout_;
  std::vector<BoxItem*> boxes_;
  std::vector<EdgeItem*> edges_;
  std::vector<HullItem*> hulls_;
  Overlay overlay_ = Overlay::None;
  double overlay_max_ = 0;
  bool dark_ = false;
  bool selecting_ = false;  // re-entrancy guard for programmatic selection
};

}  // namespace fx::views
