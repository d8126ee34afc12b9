// SPDX-License-Identifier: Apache-2.0
// MainWindow's widgets: the central split (original graph | fused graph), the docks
// (inspector, overview, candidates, Generate, before/after profile) and the status
// bar's labels, progress bars and Cancel buttons. Wiring is elsewhere.
#include <QDockWidget>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QVBoxLayout>

#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/code_view.h"
#include "views/dims_panel.h"
#include "views/document_controller.h"
#include "views/fused_graph_pane.h"
#include "views/graph_view.h"
#include "views/inspector.h"
#include "views/main_window.h"
#include "views/profile_controller.h"
#include "views/profile_summary.h"
#include "views/timeline_view.h"

namespace fx::views {

void MainWindow::build_central() {
  // Original graph on the left; the fused graph beside it when side-by-side is on.
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("GraphSplitter"));
  // The original view carries a caption like the fused pane's, shown only side by side
  // so that the two panes say which is which.
  auto* original = new QWidget(split);
  original_caption_ = new QLabel(tr("Original graph"), original);
  original_caption_->setObjectName(QStringLiteral("OriginalCaption"));
  original_caption_->setContentsMargins(6, 2, 6, 2);
  original_caption_->hide();
  auto* original_box = new QVBoxLayout(original);
  original_box->setContentsMargins(0, 0, 0, 0);
  original_box->setSpacing(0);
  original_box->addWidget(original_caption_);
  original_box->addWidget(view_, 1);
  split->addWidget(original);
  fused_pane_ = new FusedGraphPane(split);
  split->addWidget(fused_pane_);
  split->setChildrenCollapsible(false);
  fused_pane_->hide();
  setCentralWidget(split);
}

void MainWindow::build_docks() {
  inspector_ = new Inspector(this);
  auto* inspector_dock = new QDockWidget(tr("Inspector"), this);
  inspector_dock->setObjectName(QStringLiteral("InspectorDock"));
  inspector_dock->setWidget(inspector_);
  addDockWidget(Qt::RightDockWidgetArea, inspector_dock);

  minimap_ = new Minimap(scene_, view_, this);
  auto* minimap_dock = new QDockWidget(tr("Overview"), this);
  minimap_dock->setObjectName(QStringLiteral("OverviewDock"));
  minimap_dock->setWidget(minimap_);
  addDockWidget(Qt::RightDockWidgetArea, minimap_dock);
  dims_ = new DimsPanel(this);
  auto* dims_dock = new QDockWidget(tr("Dimensions"), this);
  dims_dock->setObjectName(QStringLiteral("DimensionsDock"));
  dims_dock->setWidget(dims_);
  addDockWidget(Qt::RightDockWidgetArea, dims_dock);
  tabifyDockWidget(minimap_dock, dims_dock);
  minimap_dock->raise();
  connect(dims_, &DimsPanel::dims_changed, this,
          [this](const std::map<std::string, int64_t>& d) { documents_->set_dims(d); });

  candidates_ = new CandidateModel(this);
  panel_ = new CandidatePanel(candidates_, this);
  auto* table_dock = new QDockWidget(tr("Fusion candidates"), this);
  table_dock->setObjectName(QStringLiteral("CandidatesDock"));
  table_dock->setWidget(panel_);
  addDockWidget(Qt::BottomDockWidgetArea, table_dock);
  build_profile_dock(table_dock);
  table_dock->raise();
  resizeDocks({inspector_dock, minimap_dock}, {420, 200}, Qt::Vertical);
  resizeDocks({inspector_dock}, {360}, Qt::Horizontal);
  resizeDocks({table_dock}, {230}, Qt::Vertical);

  code_ = new CodeDock(this);
  auto* code_dock = new QDockWidget(tr("Generate"), this);
  code_dock->setObjectName(QStringLiteral("GenerateDock"));
  code_dock->setWidget(code_);
  addDockWidget(Qt::BottomDockWidgetArea, code_dock);
  tabifyDockWidget(table_dock, code_dock);
  table_dock->raise();
}

void MainWindow::build_profile_dock(QDockWidget* tabify_with) {
  timeline_ = new TimelineView(this);
  profile_summary_ = new ProfileSummary(this);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(timeline_);
  split->addWidget(profile_summary_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  // In a scroll area: the timeline and the summary need more height than the candidate
  // table they share the bottom with, and a dock is never smaller than its widget's
  // minimum, so they scroll in a short dock instead of taking the graph's room.
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(split);
  auto* dock = new QDockWidget(tr("Before/after profile"), this);
  dock->setObjectName(QStringLiteral("TimelineDock"));
  dock->setWidget(scroll);
  addDockWidget(Qt::BottomDockWidgetArea, dock);
  if (tabify_with) tabifyDockWidget(tabify_with, dock);
}

void MainWindow::build_status_bar() {
  stats_ = new QLabel(tr("No model"), this);
  stats_->setObjectName(QStringLiteral("StatsLabel"));
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(220);
  progress_->setTextVisible(true);
  cancel_ = new QPushButton(tr("Cancel"), this);
  statusBar()->addWidget(stats_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  progress_->hide();
  cancel_->hide();

  // Own progress widgets for profiling: a profile runs for minutes beside open/layout jobs.
  profile_status_ = new QLabel(this);
  profile_status_->setMaximumWidth(320);
  profile_progress_ = new QProgressBar(this);
  profile_progress_->setMaximumWidth(160);
  profile_cancel_ = new QPushButton(tr("Cancel Profile"), this);
  for (QWidget* w :
       {static_cast<QWidget*>(profile_status_), static_cast<QWidget*>(profile_progress_),
        static_cast<QWidget*>(profile_cancel_)}) {
    statusBar()->addPermanentWidget(w);
    w->hide();
  }
  connect(profile_cancel_, &QPushButton::clicked, this, &MainWindow::cancel_profile);
}

void MainWindow::show_profile_progress(bool on) {
  for (QWidget* w :
       {static_cast<QWidget*>(profile_status_), static_cast<QWidget*>(profile_progress_),
        static_cast<QWidget*>(profile_cancel_)})
    w->setVisible(on);
}

}  // namespace fx::views
