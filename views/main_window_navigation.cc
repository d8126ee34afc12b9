// SPDX-License-Identifier: Apache-2.0
// MainWindow's navigation: what is on screen and selected. Expanding and revealing go
// through the DocumentController's expansion and a relayout; selection is kept in sync
// between the original graph, the fused graph, the candidate table and the inspector;
// side by side, ViewSync keeps the two views on the same nodes.
#include <QAction>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTimer>

#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/code_view.h"
#include "views/document_controller.h"
#include "views/fused_graph_pane.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/inspector.h"
#include "views/main_window.h"
#include "views/plan_controller.h"
#include "views/profile_controller.h"
#include "views/profile_summary.h"
#include "views/timeline_view.h"
#include "views/view_sync.h"

namespace fx::views {

void MainWindow::connect_selection() {
  connect(scene_, &GraphScene::node_selected, this, [this](NodeId n) {
    inspector_->show_node(*doc(), n);
    panel_->select_plan_group(doc()->group_of_node(n));
    if (fused_pane_->isVisible()) fused_pane_->show_original(n);
  });
  connect(scene_, &GraphScene::group_box_selected, this,
          [this](int g) { inspector_->show_scope_group(*doc(), g); });
  connect(scene_, &GraphScene::fusion_group_selected, this, [this](int pg) {
    inspector_->show_fusion_group(*doc(), pg);
    panel_->select_plan_group(pg);
    if (fused_pane_->isVisible()) fused_pane_->show_plan_group(pg);
    if (code_->isVisible()) generate(pg);
  });
  connect(scene_, &GraphScene::toggle_requested, this, &MainWindow::toggle_group);
  connect(scene_, &GraphScene::constants_requested, this, [this] {
    if (constants_as_nodes_->isChecked()) return;
    constants_as_nodes_->setChecked(true);
    documents_->set_constants_as_nodes(true);
  });
  connect(scene_, &GraphScene::nothing_selected, this, [this] {
    if (doc()) inspector_->show_model(*doc());
  });
  connect(panel_, &CandidatePanel::group_activated, this, &MainWindow::select_fusion_group);
  connect(panel_, &CandidatePanel::accept_requested, this, &MainWindow::accept_groups);
  connect(panel_, &CandidatePanel::reject_requested, this, &MainWindow::reject_groups);
  connect(panel_, &CandidatePanel::reset_requested, this, &MainWindow::reset_groups);
  connect(panel_, &CandidatePanel::accept_above_requested, this, &MainWindow::accept_above);
  connect(timeline_, &TimelineView::kernel_clicked, this, &MainWindow::select_nodes);
  connect(profile_summary_, &ProfileSummary::group_activated, this, &MainWindow::select_nodes);
  connect(profile_summary_, &ProfileSummary::reject_requested, this, &MainWindow::reject_groups);
  connect(profile_summary_, &ProfileSummary::reject_slower_requested, this,
          &MainWindow::reject_measured_slower);
  connect(timeline_, &TimelineView::kernel_context_menu, this,
          [this](const QStringList& nodes, QPoint global) {
            QMenu menu;
            const auto d = doc();
            const NodeId n =
                d && !nodes.isEmpty() ? d->graph().find_node(nodes.front().toStdString()) : kNoNode;
            const int pg = n == kNoNode ? -1 : d->group_of_node(n);
            if (pg >= 0) {
              const QString id = QString::fromStdString(d->plan.groups()[std::size_t(pg)].id);
              menu.addAction(tr("Reject %1 (the group of this kernel)").arg(id), this,
                             [this, id] { reject_groups({id}); });
            }
            std::unique_ptr<QMenu> summary_menu(profile_summary_->group_menu(-1));
            for (QAction* a : summary_menu->actions()) menu.addAction(a);
            menu.exec(global);
          });

  // Fused -> original.
  connect(fused_pane_, &FusedGraphPane::kernel_selected, this, [this](int pg) {
    panel_->select_plan_group(pg);
    select_fusion_group(pg);
  });
  connect(fused_pane_, &FusedGraphPane::original_selected, this, [this](NodeId n) {
    panel_->select_plan_group(doc() ? doc()->group_of_node(n) : -1);
    reveal_node(n);
  });
  fused_timer_ = new QTimer(this);
  fused_timer_->setSingleShot(true);
  fused_timer_->setInterval(250);
  connect(fused_timer_, &QTimer::timeout, this, &MainWindow::refresh_fused);

  // Navigation: either view leads, the other follows (a fresh fused graph follows the
  // original).
  sync_ = new ViewSync(view_, fused_pane_->view(), this);
  sync_->set_mappings(
      [this](NodeId n) { return std::vector<NodeId>{fused_pane_->fused_node_of(n)}; },
      [this](NodeId n) { return fused_pane_->originals_of(n); });
  sync_->set_ready([this] {
    return fused_pane_->isVisible() && doc() && fused_pane_->source() == doc().get() &&
           fused_pane_->fused();
  });
  connect(fused_pane_, &FusedGraphPane::graph_built, this, [this] {
    if (sync_) sync_->follow(false);
  });
}

void MainWindow::on_document_shown(const drawing::SceneLayout& layout) {
  const auto d = doc();
  // Nothing of the previous model's view state carries over: a filter or a find text
  // would hide the new model's rows with no hint why.
  search_text_.clear();
  search_hits_.clear();
  search_->clear();
  panel_->reset_filters();
  focus_group_ = focus_plan_group_ = -1;
  focus_node_ = kNoNode;
  scene_->set_document(d);
  scene_->show_layout(layout);
  view_->show_start();
  candidates_->set_plan(&d->plan);
  inspector_->show_model(*d);
  code_->clear();
  // A before/after result was measured on the previous model: never show it, or put it
  // in a report, for this one.
  profiler_->clear();
  timeline_->clear();
  profile_summary_->clear();
  add_recent(d->path);
  plan_->set_document(d);
  update_title();
  update_status();
  emit graph_shown();
  emit layout_shown();
}

void MainWindow::on_document_replaced(const drawing::SceneLayout& layout,
                                      std::shared_ptr<ModelDocument> previous) {
  const auto d = doc();
  // The selected op by name (the new graph numbers its nodes anew), the zoom and the
  // scroll position: shape-folding removed nodes of shape arithmetic, the rest of the
  // drawing stands where it stood.
  NodeId selected = kNoNode;
  for (QGraphicsItem* item : scene_->selectedItems())
    if (auto* box = qgraphicsitem_cast<BoxItem*>(item);
        box && box->item().kind == drawing::Item::Node && previous &&
        previous->is_model_node(box->item().id))
      selected = d->graph().find_node(previous->graph().node(box->item().id).name);
  const QTransform zoom = view_->transform();
  const QPoint scroll(view_->horizontalScrollBar()->value(), view_->verticalScrollBar()->value());
  scene_->set_document(d);
  scene_->show_layout(layout);
  view_->setTransform(zoom);
  view_->horizontalScrollBar()->setValue(scroll.x());
  view_->verticalScrollBar()->setValue(scroll.y());
  if (!search_text_.isEmpty()) search_hits_ = scene_->search(search_text_);
  candidates_->set_plan(&d->plan);
  plan_->set_document(d);
  if (selected != kNoNode) {
    scene_->select_node(selected);
    inspector_->show_node(*d, selected);
  } else {
    inspector_->show_model(*d);
  }
  update_status();
  emit layout_shown();
}

void MainWindow::on_layout_ready(const drawing::SceneLayout& result) {
  // Keep the group the user clicked where it was on screen.
  auto box_of = [this](const drawing::SceneLayout& l) -> const drawing::SceneBox* {
    if (focus_group_ <= 0 || l.box_of_group.size() <= std::size_t(focus_group_)) return nullptr;
    const int b = l.box_of_group[std::size_t(focus_group_)];
    return b >= 0 ? &l.boxes[std::size_t(b)] : nullptr;
  };
  QPointF anchor_view;
  const drawing::SceneBox* before = box_of(scene_->current_layout());
  const bool keep = before != nullptr;
  if (keep) anchor_view = view_->mapFromScene(QPointF(before->x + before->width / 2, before->y));
  scene_->show_layout(result);  // `before` is gone with the old layout
  if (!search_text_.isEmpty()) search_hits_ = scene_->search(search_text_);
  if (const drawing::SceneBox* b = keep ? box_of(result) : nullptr) {
    const QPointF now = view_->mapFromScene(QPointF(b->x + b->width / 2, b->y));
    view_->centerOn(
        view_->mapToScene(view_->viewport()->rect().center() + (now - anchor_view).toPoint()));
  }
  focus_group_ = -1;
  if (focus_plan_group_ >= 0) {
    const int pg = focus_plan_group_;
    focus_plan_group_ = -1;
    select_fusion_group(pg);
  }
  if (focus_node_ != kNoNode) {
    const NodeId n = focus_node_;
    focus_node_ = kNoNode;
    reveal_node(n);
  }
  update_status();
  emit layout_shown();
}

void MainWindow::on_plan_changed(bool rows_changed) {
  if (rows_changed) candidates_->plan_changed();
  scene_->refresh_fusion();
  if (side_by_side()) fused_timer_->start();  // rebuild the fused graph
  undo_->setEnabled(plan_->can_undo());
  redo_->setEnabled(plan_->can_redo());
  if (doc()) panel_->set_summary(plan_->summary());
  if (doc()) inspector_->refresh(*doc());  // the shown group's new status, in place
  update_status();                         // its counts are the plan's
}

void MainWindow::toggle_group(int group) {
  const auto d = doc();
  if (!d || group <= 0 || group >= int(d->tree->group_count())) return;
  drawing::Expansion& e = documents_->expansion();
  e.set_open(group, !e.is_open(group));
  focus_group_ = group;
  documents_->relayout();
}

void MainWindow::open_group(int group) {
  const auto d = doc();
  if (!d || group <= 0 || group >= int(d->tree->group_count())) return;
  const auto& boxes = scene_->current_layout().box_of_group;
  if (std::size_t(group) < boxes.size() && boxes[std::size_t(group)] >= 0) {
    if (!documents_->expansion().is_open(group)) toggle_group(group);  // the double-click path
    return;
  }
  for (int g = group; g > 0; g = d->tree->group(g).parent)
    documents_->expansion().set_open(g, true);
  focus_group_ = group;
  documents_->relayout();
}

void MainWindow::reveal_node(NodeId node) {
  const auto d = doc();
  if (!d || node < 0 || std::size_t(node) >= d->drawn_graph().node_count()) return;
  BoxItem* box = scene_->box_of_node(node);
  if (box && box->item().kind == drawing::Item::Node) {
    scene_->select_node(node);
    inspector_->show_node(*d, node);
    view_->reveal(box->sceneBoundingRect());
    return;
  }
  documents_->expansion().reveal(*d->tree, node);
  focus_node_ = node;
  documents_->relayout();
}

void MainWindow::select_fusion_group(int plan_index) {
  const auto d = doc();
  if (!d) return;
  scene_->select_fusion_group(plan_index);
  inspector_->show_fusion_group(*d, plan_index);
  if (side_by_side()) fused_pane_->show_plan_group(plan_index);
  // Bring its first member on screen, opening groups when it is folded away.
  const auto& groups = d->plan.groups();
  if (plan_index < 0 || std::size_t(plan_index) >= groups.size() ||
      groups[std::size_t(plan_index)].nodes.empty())
    return;
  bool folded = false;
  for (const std::string& name : groups[std::size_t(plan_index)].nodes) {
    const NodeId n = d->graph().find_node(name);
    BoxItem* box = scene_->box_of_node(n);
    if (n != kNoNode && (!box || box->item().kind != drawing::Item::Node)) {
      documents_->expansion().reveal(*d->tree, n);
      folded = true;
    }
  }
  if (folded) {  // lay out with the members open, then select again (on_layout_ready)
    focus_plan_group_ = plan_index;
    documents_->relayout();
    return;
  }
  const NodeId first = d->graph().find_node(groups[std::size_t(plan_index)].nodes.front());
  if (first == kNoNode) return;
  if (BoxItem* box = scene_->box_of_node(first)) view_->reveal(box->sceneBoundingRect());
}

void MainWindow::select_group(int plan_group) {
  panel_->select_plan_group(plan_group);
  select_fusion_group(plan_group);
}

void MainWindow::select_nodes(const QStringList& names) {
  const auto d = doc();
  if (!d || names.isEmpty()) return;
  const NodeId first = d->graph().find_node(names.front().toStdString());
  if (first == kNoNode) {
    statusBar()->showMessage(tr("%1 is not a node of this model").arg(names.front()), 5000);
    return;
  }
  // A kernel covering several nodes of one plan group: show the group (its hull, the
  // inspector's breakdown); otherwise the node itself.
  const int group = d->group_of_node(first);
  if (names.size() > 1 && group >= 0) {
    select_fusion_group(group);
    return;
  }
  reveal_node(first);
}

void MainWindow::on_search() {
  if (!doc()) return;
  const QString text = search_->text().trimmed();
  if (text != search_text_) {
    search_text_ = text;
    search_hits_ = scene_->search(text);
    search_pos_ = 0;
  }
  if (search_hits_.empty()) {
    statusBar()->showMessage(text.isEmpty() ? QString() : tr("No node matches “%1”").arg(text),
                             5000);
    return;
  }
  const NodeId n = search_hits_[search_pos_ % search_hits_.size()];
  statusBar()->showMessage(
      tr("Match %1 of %2").arg(search_pos_ % search_hits_.size() + 1).arg(search_hits_.size()),
      5000);
  ++search_pos_;
  reveal_node(n);
}

void MainWindow::set_side_by_side(bool on) {
  if (side_by_side_->isChecked() != on) side_by_side_->setChecked(on);
  fused_pane_->setVisible(on);
  original_caption_->setVisible(on);
  if (on) {
    auto* split = qobject_cast<QSplitter*>(centralWidget());
    if (split) split->setSizes({split->width() / 2, split->width() / 2});
    refresh_fused();
  }
}

bool MainWindow::side_by_side() const {
  return fused_pane_->isVisible();
}

void MainWindow::set_navigation_linked(bool on) {
  if (link_views_->isChecked() != on) link_views_->setChecked(on);
  sync_->set_linked(on);
}

bool MainWindow::navigation_linked() const {
  return sync_->linked();
}

void MainWindow::refresh_fused() {
  if (!fused_pane_->isVisible()) return;
  fused_pane_->set_dark(dark_);
  fused_pane_->set_source(doc(), label_metrics(fused_pane_->view()->font()));
}

}  // namespace fx::views
