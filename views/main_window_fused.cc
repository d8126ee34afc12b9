// MainWindow's side-by-side fused graph and the Generate dock: the fused pane is
// rebuilt (off the UI thread) when shown and after plan changes; selection is kept in
// sync both ways between the original graph, the fused graph and the candidate table.
#include <QAction>
#include <QDockWidget>
#include <QFontMetricsF>
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
    bar->addAction(generate_);
  }

  fused_timer_ = new QTimer(this);
  fused_timer_->setSingleShot(true);
  fused_timer_->setInterval(250);
  connect(fused_timer_, &QTimer::timeout, this, &MainWindow::refresh_fused);

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
  if (on) {
    auto* split = qobject_cast<QSplitter*>(centralWidget());
    if (split) split->setSizes({split->width() / 2, split->width() / 2});
    refresh_fused();
  }
}

bool MainWindow::side_by_side() const {
  return fused_pane_->isVisible();
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
