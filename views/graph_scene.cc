// SPDX-License-Identifier: Apache-2.0
#include "views/graph_scene.h"

#include <QFontMetricsF>
#include <QGraphicsSceneMouseEvent>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "analysis/fused_graph.h"
#include "views/graph_items.h"

namespace fx::views {

drawing::LabelMetrics label_metrics(const QFont& font) {
  QFont bold = font;
  bold.setBold(true);
  const QFontMetricsF fm(bold);
  drawing::LabelMetrics m;
  m.char_width = fm.horizontalAdvance(QStringLiteral("LayerNormalization")) / 18.0 * 1.08;
  m.line_height = fm.height() + 2;
  m.padding = 10;
  // Exact widths: the boxes and frame titles are then never narrower than their text.
  // A little slack for the rounding of glyph advances between measuring and painting.
  m.text_width = [regular = QFontMetricsF(font), bold = fm](const std::string& line, bool is_bold) {
    const QString s = QString::fromStdString(line);
    return (is_bold ? bold : regular).horizontalAdvance(s) + 2;
  };
  return m;
}

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
  // Items never move after a layout; a BSP index only costs time on rebuild.
  setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::on_selection_changed);
}

GraphScene::~GraphScene() {
  blockSignals(true);
  clear();
}

void GraphScene::set_document(std::shared_ptr<ModelDocument> doc) {
  doc_ = std::move(doc);
  selecting_ = true;  // clearing deselects: not a user action
  clear();
  selecting_ = false;
  boxes_.clear();
  edges_.clear();
  hulls_.clear();
  layout_ = {};
}

void GraphScene::set_dark(bool dark) {
  dark_ = dark;
  setBackgroundBrush(dark ? QColor(36, 38, 43) : QColor(252, 252, 253));
  if (doc_ && !layout_.boxes.empty()) show_layout(drawing::SceneLayout(layout_));
}

QString GraphScene::edge_label(const drawing::SceneEdge& e) const {
  if (e.value == kNoValue) return {};
  const Value& v = doc_->drawn_graph().value(e.value);
  QString s = format_shape(v.shape);  // "scalar" for rank 0, not "[]"
  if (e.count > 1) s += QStringLiteral("  ×") + QString::number(e.count);
  return s;
}

QString GraphScene::edge_short_label(const drawing::SceneEdge& e) const {
  // "64×35×35" for [1,64,35,35]: dims joined by ×, a leading batch of 1 left out (the
  // brackets tell the full form from the short one; the tooltip has the full shape).
  if (e.value == kNoValue) return {};
  const Shape& shape = doc_->drawn_graph().value(e.value).shape;
  if (!shape.rank_known() || shape.rank() < 2) return edge_label(e);
  QStringList dims;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    const Dim& d = shape.dims()[i];
    if (i == 0 && d.is_static() && d.value == 1) continue;
    dims << (d.is_static() ? QString::number(d.value)
                           : QString::fromStdString(d.symbol.empty() ? "?" : d.symbol));
  }
  QString s = dims.join(QStringLiteral("×"));
  if (e.count > 1) s += QStringLiteral("  ×") + QString::number(e.count);
  return s;
}

void GraphScene::show_layout(const drawing::SceneLayout& layout) {
  selecting_ = true;  // clearing deselects: not a user action
  clear();            // deletes the items
  selecting_ = false;
  boxes_.clear();
  edges_.clear();
  hulls_.clear();
  layout_ = layout;
  if (!doc_) return;
  const Graph& g = doc_->drawn_graph();  // the tree's graph: body nodes included
  const drawing::ScopeTree& tree = *doc_->tree;
  boxes_.reserve(layout.boxes.size());
  for (std::size_t i = 0; i < layout.boxes.size(); ++i) {
    const drawing::SceneBox& b = layout.boxes[i];
    QStringList lines;
    for (const auto& l : drawing::box_lines(g, tree, b.item)) lines << QString::fromStdString(l);
    OpStyle style = group_box_style(dark_);
    int repeats = 0;
    QString tip;
    if (b.item.kind == drawing::Item::Node) {
      const Node& n = g.node(b.item.id);
      style = op_style(classify_op(n.domain, n.op_type).kind, dark_);
      tip = QString::fromStdString(n.name) + QLatin1Char('\n') + QString::fromStdString(n.op_type);
      if (n.domain == kFusedKernelDomain) {  // a kernel of the fused graph
        const QColor c = status_color(GroupStatus::Accepted);
        style.fill = dark_ ? c.darker(220) : c.lighter(175);
        style.border = c.darker(140);
        tip += tr("\nfused kernel");
      }
    } else {
      const drawing::Group& grp = tree.group(b.item.id);
      repeats = grp.repeat_count;
      tip = QString::fromStdString(grp.path.empty() ? grp.name : grp.path) + QLatin1Char('\n') +
            QString::fromStdString(tree.summary(b.item.id)) +
            (b.open ? tr("\nDouble-click to collapse") : tr("\nDouble-click to expand"));
    }
    auto* item = new BoxItem(b, int(i), lines, style, repeats);
    if (b.item.kind == drawing::Item::Node && doc_->is_model_node(b.item.id)) {
      // What the canonical form folded into this op: a badge, and its names in the tip.
      const auto& folded = doc_->folded_into(g.node(b.item.id).name);
      if (!folded.empty()) {
        item->set_badge(folded.size() == 1 ? tr("+BN") : tr("+%1 BN").arg(folded.size()));
        for (const FoldedNode& f : folded)
          tip += tr("\n+ %1 '%2' folded into its weights")
                     .arg(QString::fromStdString(f.op_type), QString::fromStdString(f.name));
      }
    }
    item->setToolTip(tip);
    addItem(item);
    boxes_.push_back(item);
  }
  const QColor edge_color = dark_ ? QColor(170, 175, 185) : QColor(90, 95, 105);
  // Edge labels paint in 0.8x the scene's font (EdgeItem::paint).
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  const QFontMetricsF label_fm(small);
  for (const auto& e : layout.edges) {
    QString label = edge_label(e);
    const QSizeF label_size(label_fm.horizontalAdvance(label) + 4, label_fm.height() + 2);
    auto* item = new EdgeItem(e, std::move(label), label_size, edge_color);
    const QString short_label = edge_short_label(e);
    item->set_short_label(
        short_label, QSizeF(label_fm.horizontalAdvance(short_label) + 4, label_fm.height() + 2));
    if (e.value != kNoValue) {
      const Value& v = g.value(e.value);
      item->setToolTip(
          QString::fromStdString(v.name) + QLatin1Char('\n') +
          QString::fromLatin1(dtype_name(v.dtype)) + QLatin1Char(' ') +
          QString::fromStdString(v.shape.str()) +
          (e.bytes > 0 ? QStringLiteral("\n") + format_bytes(double(e.bytes)) : QString()));
    }
    addItem(item);
    edges_.push_back(item);
  }
  setSceneRect(QRectF(-40, -40, layout.size.width + 80, layout.size.height + 80));
  place_labels();
  refresh_fusion();
  apply_overlay();
}

void GraphScene::place_labels() {
  const drawing::SceneLayout& layout = layout_;
  // Shape labels must not cover closed boxes, the title bars of open frames, the edges'
  // lines or each other, where edges converge on one input. A label may cross a
  // frame's side (a narrow frame leaves no room beside its chain) and a fusion hull's
  // outline (translucent, and changed by the plan).
  LabelPlacer placer;
  const double title_h = doc_->layout ? doc_->layout->frame_header() : 22.0;
  for (const auto& b : layout.boxes)
    placer.occupy(QRectF(b.x, b.y, b.width, b.open ? title_h : b.height));
  for (const EdgeItem* e : edges_) e->occupy_line(placer);
  // Where edges converge, room runs out. The rule for which labels go: several edges
  // into one box carrying the same shape (a DenseNet Concat of six 32-channel maps)
  // need it shown once, so the first of each such set is placed before the others; a
  // label is left out only when no spot along its edge is clear for its full or its
  // short form, and then mostly one whose shape a sibling already shows (the edge's
  // tooltip keeps it).
  std::set<std::pair<int32_t, QString>> seen;
  std::vector<EdgeItem*> later;
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    if (seen.insert({layout.edges[i].to, edges_[i]->text()}).second)
      edges_[i]->place_label(placer);
    else
      later.push_back(edges_[i]);
  }
  for (EdgeItem* e : later) e->place_label(placer);
}

void GraphScene::refresh_fusion() {
  // A decision repaints the hulls; the selected one is selected again, without telling
  // the window that the selection went away (the inspector keeps showing it).
  int selected_group = -1;
  const bool was_selecting = selecting_;
  selecting_ = true;
  for (HullItem* h : hulls_) {
    if (h->isSelected()) selected_group = h->plan_group();
    removeItem(h);
    delete h;
  }
  hulls_.clear();
  selecting_ = was_selecting;
  if (!doc_) return;
  const auto& groups = doc_->plan.groups();
  // The boxes showing each plan group's members, from the node -> group index (no name
  // lookups: this runs on the UI thread after every decision). A group whose members
  // all sit in one closed box is skipped early; only the others collect their boxes.
  std::vector<int> first_box(groups.size(), -1);
  std::vector<int> spread;  // groups over two boxes or more
  std::vector<int> spread_slot(groups.size(), -1);
  for (std::size_t n = 0; n < layout_.box_of_node.size(); ++n) {
    const int b = layout_.box_of_node[n];
    const int gi = doc_->group_of_node(NodeId(n));
    if (b < 0 || gi < 0 || std::size_t(gi) >= groups.size()) continue;
    int& first = first_box[std::size_t(gi)];
    if (first < 0) {
      first = b;
    } else if (first != b && spread_slot[std::size_t(gi)] < 0) {
      spread_slot[std::size_t(gi)] = int(spread.size());
      spread.push_back(gi);
    }
  }
  std::sort(spread.begin(), spread.end());  // hulls stacked in plan order, as before
  for (std::size_t k = 0; k < spread.size(); ++k) spread_slot[std::size_t(spread[k])] = int(k);
  std::vector<std::unordered_set<int>> boxes_of(spread.size());
  for (std::size_t n = 0; n < layout_.box_of_node.size(); ++n) {
    const int b = layout_.box_of_node[n];
    const int gi = doc_->group_of_node(NodeId(n));
    if (b < 0 || gi < 0 || std::size_t(gi) >= groups.size()) continue;
    if (const int slot = spread_slot[std::size_t(gi)]; slot >= 0)
      boxes_of[std::size_t(slot)].insert(b);
  }
  for (std::size_t si = 0; si < spread.size(); ++si) {
    const std::size_t gi = std::size_t(spread[si]);
    const std::unordered_set<int>& shown = boxes_of[si];
    // A group entirely inside one closed box is not drawn: it would hide the box.
    if (shown.size() < 2) continue;
    const QPainterPath outline = hull_outline(shown);
    const FusionGroup& fg = groups[gi];
    auto* hull =
        new HullItem(int(gi), outline, status_color(fg.status), fg.estimate.traffic_reduction());
    hull->setToolTip(QString::fromStdString(fg.id + "  " + fg.pattern) + QLatin1Char('\n') +
                     tr("saves %1, %2 launches")
                         .arg(format_bytes(double(fg.estimate.bytes_saved())))
                         .arg(fg.estimate.launches_saved()));
    addItem(hull);
    hulls_.push_back(hull);
    if (int(gi) == selected_group) {
      const bool quiet = selecting_;
      selecting_ = true;
      hull->setSelected(true);
      selecting_ = quiet;
    }
  }
  // Edges from a member of a group to a member of the same group, either end possibly
  // inside a closed group box: their tensor stays on chip. They also join the pieces of
  // a hull split by frames.
  const Graph& g = doc_->drawn_graph();
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    const auto& e = layout_.edges[i];
    std::optional<QColor> internal;
    if (e.value != kNoValue) {
      const Value& v = g.value(e.value);
      const int gp = v.producer == kNoNode ? -1 : doc_->group_of_node(v.producer);
      if (gp >= 0 && box_of_node(v.producer) == boxes_[std::size_t(e.from)])
        for (NodeId c : v.consumers)
          if (doc_->group_of_node(c) == gp && box_of_node(c) == boxes_[std::size_t(e.to)]) {
            internal = status_color(groups[std::size_t(gp)].status).darker(130);
            break;
          }
    }
    edges_[i]->set_internal(internal);
  }
}

QPainterPath GraphScene::hull_outline(const std::unordered_set<int>& shown) const {
  // Members are drawn in pieces, one per frame holding them (a group can run from the
  // patch embedding into the first encoder layer, across two frames' title bars): each
  // piece is a rounded rectangle around its members when that covers no other box (the
  // usual chain), else the union of the members' outlines bridged in order, clipped to
  // its frame's body. No piece covers a title bar; edges between members, drawn in the
  // group's colour, join the pieces.
  std::map<drawing::GroupId, std::vector<int>> pieces;
  for (int b : shown) pieces[layout_.boxes[std::size_t(b)].parent].push_back(b);
  const double header = doc_->layout ? doc_->layout->frame_header() : 22.0;
  QPainterPath titles;  // every open frame's title bar
  for (const auto& sb : layout_.boxes)
    if (sb.open) titles.addRect(QRectF(sb.x, sb.y, sb.width, header));
  QPainterPath outline;
  outline.setFillRule(Qt::WindingFill);
  for (auto& [parent, members] : pieces) {
    std::sort(members.begin(), members.end());
    QRectF bounds;
    for (int b : members) {
      const auto& sb = layout_.boxes[std::size_t(b)];
      bounds |= QRectF(sb.x, sb.y, sb.width, sb.height);
    }
    bool covers_other = false;
    const std::unordered_set<int> mine(members.begin(), members.end());
    for (std::size_t b = 0; b < layout_.boxes.size() && !covers_other; ++b) {
      const auto& sb = layout_.boxes[b];
      covers_other = !sb.open && !mine.count(int(b)) &&
                     bounds.intersects(QRectF(sb.x, sb.y, sb.width, sb.height));
    }
    QPainterPath piece;
    piece.setFillRule(Qt::WindingFill);
    if (!covers_other) {
      piece.addRoundedRect(bounds.adjusted(-8, -8, 8, 8), 10, 10);
    } else {
      for (int b : members) {
        const auto& sb = layout_.boxes[std::size_t(b)];
        piece.addRoundedRect(QRectF(sb.x - 7, sb.y - 7, sb.width + 14, sb.height + 14), 9, 9);
      }
      for (std::size_t k = 0; k + 1 < members.size(); ++k) {
        const auto& a = layout_.boxes[std::size_t(members[k])];
        const auto& c = layout_.boxes[std::size_t(members[k + 1])];
        const QPointF pa(a.x + a.width / 2, a.y + a.height / 2);
        const QPointF pc(c.x + c.width / 2, c.y + c.height / 2);
        const QPointF half(12, 0);
        piece.addPolygon(QPolygonF({pa - half, pa + half, pc + half, pc - half, pa - half}));
      }
    }
    const int frame = std::size_t(parent) < layout_.box_of_group.size()
                          ? layout_.box_of_group[std::size_t(parent)]
                          : -1;
    if (frame >= 0 && layout_.boxes[std::size_t(frame)].open) {
      const auto& f = layout_.boxes[std::size_t(frame)];
      QPainterPath body;
      body.addRect(QRectF(f.x, f.y + header, f.width, f.height - header));
      piece = piece.simplified().intersected(body);
    }
    outline.addPath(piece.simplified());
  }
  if (!titles.isEmpty()) return outline.simplified().subtracted(titles.simplified());
  return outline.simplified();
}

void GraphScene::set_overlay(Overlay overlay) {
  overlay_ = overlay;
  apply_overlay();
}

void GraphScene::apply_overlay() {
  overlay_max_ = 0;
  if (!doc_ || !doc_->cost || overlay_ == Overlay::None) {
    for (BoxItem* b : boxes_) b->set_overlay(std::nullopt);
    return;
  }
  // A closed group shows the sum over the nodes it holds.
  std::vector<double> value(boxes_.size(), 0.0);
  for (std::size_t n = 0; n < layout_.box_of_node.size(); ++n) {
    const int b = layout_.box_of_node[n];
    if (b < 0 || !doc_->is_model_node(NodeId(n))) continue;  // body nodes have no cost
    const Cost& c = doc_->cost->node(NodeId(n));
    if (!c.known) continue;
    value[std::size_t(b)] += overlay_ == Overlay::Bytes ? double(c.bytes()) : c.flops;
  }
  double lo = 0;
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    if (boxes_[i]->is_open() || value[i] <= 0) continue;
    overlay_max_ = std::max(overlay_max_, value[i]);
    lo = lo == 0 ? value[i] : std::min(lo, value[i]);
  }
  // Log scale between the smallest and largest box on screen: costs span orders of
  // magnitude between a Reshape and a Conv, and both ends should use the whole ramp.
  const double span = overlay_max_ > lo && lo > 0 ? std::log(overlay_max_ / lo) : 0;
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    if (boxes_[i]->is_open() || overlay_max_ <= 0) {
      boxes_[i]->set_overlay(std::nullopt);
      continue;
    }
    const double t = value[i] <= 0 ? 0 : span > 0 ? std::log(value[i] / lo) / span : 1;
    boxes_[i]->set_overlay(heat_color(t));
  }
}

BoxItem* GraphScene::box_of_node(NodeId n) const {
  if (n < 0 || std::size_t(n) >= layout_.box_of_node.size()) return nullptr;
  const int b = layout_.box_of_node[std::size_t(n)];
  return b >= 0 ? boxes_[std::size_t(b)] : nullptr;
}

int GraphScene::closed_box_near(const QPointF& p) const {
  int best = -1;
  double best_d = 0;
  for (std::size_t i = 0; i < layout_.boxes.size(); ++i) {
    const auto& b = layout_.boxes[i];
    if (b.open) continue;
    // Distance to the rectangle (0 inside), then to its centre to break ties.
    const double dx = std::max({b.x - p.x(), 0.0, p.x() - (b.x + b.width)});
    const double dy = std::max({b.y - p.y(), 0.0, p.y() - (b.y + b.height)});
    const double cx = b.x + b.width / 2 - p.x(), cy = b.y + b.height / 2 - p.y();
    const double d = (dx * dx + dy * dy) * 1e6 + cx * cx + cy * cy;
    if (best < 0 || d < best_d) {
      best = int(i);
      best_d = d;
    }
  }
  return best;
}

NodeId GraphScene::node_of_box(int box) const {
  if (!doc_ || box < 0 || std::size_t(box) >= layout_.boxes.size()) return kNoNode;
  drawing::Item item = layout_.boxes[std::size_t(box)].item;
  // Children are in topological order: the first leaf below is the group's first node.
  while (item.kind == drawing::Item::Group) {
    const auto& children = doc_->tree->group(item.id).children;
    if (children.empty()) return kNoNode;
    item = children.front();
  }
  return item.id;
}

QRectF GraphScene::box_rect(int box) const {
  if (box < 0 || std::size_t(box) >= layout_.boxes.size()) return {};
  const auto& b = layout_.boxes[std::size_t(box)];
  return {b.x, b.y, b.width, b.height};
}

QRectF GraphScene::node_rect(NodeId n) const {
  if (n < 0 || std::size_t(n) >= layout_.box_of_node.size()) return {};
  return box_rect(layout_.box_of_node[std::size_t(n)]);
}

void GraphScene::select_fusion_group(int plan_group) {
  selecting_ = true;
  clearSelection();
  for (HullItem* h : hulls_)
    if (h->plan_group() == plan_group) h->setSelected(true);
  for (BoxItem* b : boxes_) {
    bool in = false;
    if (plan_group >= 0 && b->item().kind == drawing::Item::Node)
      in = doc_->group_of_node(b->item().id) == plan_group;
    b->set_highlighted(in);
  }
  selecting_ = false;
}

void GraphScene::select_node(NodeId n) {
  selecting_ = true;
  clearSelection();
  if (BoxItem* b = box_of_node(n)) b->setSelected(true);
  selecting_ = false;
}

std::vector<NodeId> GraphScene::search(const QString& text) {
  std::vector<NodeId> hits;
  for (BoxItem* b : boxes_) b->set_match(false);
  if (!doc_ || text.isEmpty()) return hits;
  const std::string needle = text.toLower().toStdString();
  auto contains = [&](std::string hay) {
    std::transform(hay.begin(), hay.end(), hay.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return hay.find(needle) != std::string::npos;
  };
  const Graph& g = doc_->drawn_graph();
  // A node folded away by canonicalization (a BN into its Conv) is found as the node
  // that absorbed it: the user searches for the name their model has.
  auto folded_matches = [&](const std::string& node) {
    for (const FoldedNode& f : doc_->folded_into(node))
      if (contains(f.name) || contains(f.op_type)) return true;
    return false;
  };
  for (std::size_t n = 0; n < g.node_count(); ++n) {
    const Node& node = g.nodes()[n];
    if (contains(node.name) || contains(node.op_type) || folded_matches(node.name))
      hits.push_back(NodeId(n));
  }
  std::sort(hits.begin(), hits.end(), [&](NodeId a, NodeId b) {
    return doc_->tree->topo_position(a) < doc_->tree->topo_position(b);
  });
  for (NodeId n : hits)
    if (BoxItem* b = box_of_node(n)) b->set_match(true);
  return hits;
}

void GraphScene::on_selection_changed() {
  if (selecting_) return;
  const auto items = selectedItems();
  if (items.isEmpty()) {
    emit nothing_selected();
    return;
  }
  if (auto* box = qgraphicsitem_cast<BoxItem*>(items.front())) {
    if (box->item().kind == drawing::Item::Node)
      emit node_selected(box->item().id);
    else
      emit group_box_selected(box->item().id);
  } else if (auto* hull = qgraphicsitem_cast<HullItem*>(items.front())) {
    emit fusion_group_selected(hull->plan_group());
  }
}

void GraphScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
  for (QGraphicsItem* it : items(event->scenePos())) {
    auto* box = qgraphicsitem_cast<BoxItem*>(it);
    if (!box) continue;
    // The innermost box under the cursor decides: an op does nothing, a group
    // (closed box or open frame) toggles.
    if (box->item().kind == drawing::Item::Group) {
      emit toggle_requested(box->item().id);
      event->accept();
      return;
    }
    if (box->line_count() > 1) {  // an op listing its constants
      emit constants_requested(box->item().id);
      event->accept();
      return;
    }
    break;
  }
  QGraphicsScene::mouseDoubleClickEvent(event);
}

}  // namespace fx::views
