// MainWindow's side-by-side fused graph and the Generate dock: the fused pane is
// rebuilt (off the UI thread) when shown and after plan changes; selection is kept in
// sync both ways between the original graph, the fused graph and the candidate table.
#include <QAction>
#include <QDockWidget>
#include <QFontMetricsF>
#include <QLabel>
#include <QMenu>
#include <QSplitter>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>

#include "views/candidate_panel.h"
#include "views/code_view.h"
#include "views/fused_graph_pane.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/main_window.h"

namespace fx::views {

void MainWindow::build_fused_actions(QMenu* view_menu, QToolBar* bar) {
  side_by_side_ = view_menu->addAction(tr("&Side by Side: Original | Fused"), this,
                                       [this](bool on) { set_side_by_side(on); });
  side_by_side_->setCheckable(true);
  side_by_side_->setShortcut(QKeySequence(Qt::Key_F7));
  side_by_side_->setObjectName(QStringLiteral("SideBySideAction"));
  side_by_side_->setToolTip(
      tr("Show the fused graph (accepted groups as kernels) beside the original"));
  link_views_ = view_menu->addAction(tr("&Link Navigation"), this,
                                     [this](bool on) { set_navigation_linked(on); });
  link_views_->setCheckable(true);
  link_views_->setChecked(true);
  link_views_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F7));
  link_views_->setObjectName(QStringLiteral("LinkNavigationAction"));
  link_views_->setToolTip(
      tr("Side by side: zooming or panning one graph moves the other to the same nodes"));
  generate_ = view_menu->addAction(tr("&Generate Kernel Source"), this, [this] {
    int pg = -1;
    if (doc_ && !panel_->selected_ids().isEmpty()) {
      const std::string id = panel_->selected_ids().front().toStdString();
      const auto& gs = doc_->plan.groups();
      for (std::size_t i = 0; i < gs.size(); ++i)
        if (gs[i].id == id) pg = int(i);
    }
    generate(pg);
  });
  generate_->setShortcut(QKeySequence(Qt::Key_F6));
  generate_->setObjectName(QStringLiteral("GenerateAction"));
  if (bar) {
    bar->addSeparator();
    bar->addAction(side_by_side_);
    bar->addAction(link_views_);
    bar->addAction(generate_);
  }

  fused_timer_ = new QTimer(this);
  fused_timer_->setSingleShot(true);
  fused_timer_->setInterval(250);
  connect(fused_timer_, &QTimer::timeout, this, &MainWindow::refresh_fused);

  // Navigation: either view leads, the other follows (a fresh fused graph follows the
  // original).
  connect(view_, &GraphView::viewport_changed, this, [this] { sync_views(false); });
  connect(fused_pane_->view(), &GraphView::viewport_changed, this, [this] { sync_views(true); });
  connect(fused_pane_, &FusedGraphPane::graph_built, this, [this] { sync_views(false); });

  // Original -> fused.
  connect(scene_, &GraphScene::node_selected, this, [this](NodeId n) {
    if (fused_pane_->isVisible()) fused_pane_->show_original(n);
  });
  connect(scene_, &GraphScene::fusion_group_selected, this, [this](int pg) {
    if (fused_pane_->isVisible()) fused_pane_->show_plan_group(pg);
    if (code_->isVisible()) generate(pg);
  });
  // Fused -> original.
  connect(fused_pane_, &FusedGraphPane::kernel_selected, this, [this](int pg) {
    panel_->select_plan_group(pg);
    select_fusion_group(pg);
  });
  connect(fused_pane_, &FusedGraphPane::original_selected, this, [this](NodeId n) {
    panel_->select_plan_group(doc_ ? doc_->group_of_node(n) : -1);
    reveal_node(n);
  });
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
  if (on) sync_views(false);
}

bool MainWindow::navigation_linked() const {
  return link_views_->isChecked();
}

void MainWindow::sync_views(bool from_fused) {
  if (syncing_views_ || !link_views_->isChecked() || !fused_pane_->isVisible() || !doc_ ||
      fused_pane_->source() != doc_.get() || !fused_pane_->fused())
    return;
  GraphView* src = from_fused ? fused_pane_->view() : view_;
  GraphView* dst = from_fused ? view_ : fused_pane_->view();
  const GraphScene* src_scene = from_fused ? fused_pane_->scene() : scene_;
  const GraphScene* dst_scene = from_fused ? scene_ : fused_pane_->scene();
  const QPointF src_centre = QRectF(src->viewport()->rect()).center();
  const int box = src_scene->closed_box_near(src->mapToScene(src_centre.toPoint()));
  const NodeId lead = src_scene->node_of_box(box);
  if (lead == kNoNode) return;
  // The matching nodes: a kernel's members, or the fused node that holds an original.
  std::vector<NodeId> matches;
  if (from_fused)
    matches = fused_pane_->originals_of(lead);
  else
    matches.push_back(fused_pane_->fused_node_of(lead));
  QRectF target;
  for (NodeId n : matches) target |= dst_scene->node_rect(n);
  if (target.isEmpty()) return;
  // Same zoom, and the target where the lead box is on screen (not merely centred:
  // the box nearest the centre is rarely exactly at it).
  const double z = src->zoom();
  const QPointF offset =
      (QPointF(src->mapFromScene(src_scene->box_rect(box).center())) - src_centre) / z;
  syncing_views_ = true;
  dst->setTransform(QTransform::fromScale(z, z));
  dst->centerOn(target.center() - offset);
  emit dst->viewport_changed();  // the minimap, when the scroll did not move
  syncing_views_ = false;
}

void MainWindow::refresh_fused() {
  if (!fused_pane_->isVisible()) return;
  fused_pane_->set_dark(dark_);
  fused_pane_->set_source(doc_, label_metrics(fused_pane_->view()->font()));
}

void MainWindow::generate(int plan_group) {
  if (!doc_ || plan_group < 0 || std::size_t(plan_group) >= doc_->plan.groups().size()) {
    statusBar()->showMessage(tr("Select a fusion group to generate its kernel"), 5000);
    return;
  }
  if (auto* dock = qobject_cast<QDockWidget*>(code_->parent())) {
    dock->show();
    dock->raise();
  }
  code_->generate(doc_, doc_->plan.groups()[std::size_t(plan_group)]);
}

}  // namespace fx::views

namespace fx::views {

void MainWindow::select_group(int plan_group) {
  panel_->select_plan_group(plan_group);
  select_fusion_group(plan_group);
}

}  // namespace fx::views
