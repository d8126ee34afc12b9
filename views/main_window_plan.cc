// MainWindow's plan side: decisions go to FusionPlan (which owns undo/redo), then the
// table, hulls and title are refreshed; plan files, autosave and image export.
#include <QAction>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTimer>

#include "util/error.h"
#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/fused_graph_pane.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/inspector.h"
#include "views/main_window.h"
#include "views/op_style.h"

namespace fx::views {

void MainWindow::plan_changed(bool modified, bool rows_changed) {
  if (modified) setWindowModified(true);
  if (rows_changed) candidates_->plan_changed();
  scene_->refresh_fusion();
  if (fused_timer_ && side_by_side()) fused_timer_->start();  // rebuild the fused graph
  undo_->setEnabled(doc_ && doc_->plan.can_undo());
  redo_->setEnabled(doc_ && doc_->plan.can_redo());
  if (!doc_) return;
  int accepted = 0, rejected = 0;
  int64_t bytes = 0;
  double time = 0;
  for (const FusionGroup& g : doc_->plan.groups()) {
    if (g.status == GroupStatus::Accepted) {
      ++accepted;
      if (g.estimate.known) bytes += g.estimate.bytes_saved(), time += g.estimate.time_saved_s();
    } else if (g.status == GroupStatus::Rejected) {
      ++rejected;
    }
  }
  panel_->set_summary(tr("%1 accepted · %2 rejected · saves %3, %4")
                          .arg(accepted)
                          .arg(rejected)
                          .arg(format_bytes(double(bytes)))
                          .arg(format_seconds(time)));
}

void MainWindow::accept_groups(const QStringList& ids) {
  if (!doc_) return;
  bool any = false;
  for (const QString& id : ids) any |= doc_->plan.accept(id.toStdString(), "accepted in the GUI");
  if (any) plan_changed();
}

void MainWindow::reject_groups(const QStringList& ids) {
  if (!doc_) return;
  bool any = false;
  for (const QString& id : ids) any |= doc_->plan.reject(id.toStdString(), "rejected in the GUI");
  if (any) plan_changed();
}

void MainWindow::reset_groups(const QStringList& ids) {
  if (!doc_) return;
  bool any = false;
  for (const QString& id : ids) any |= doc_->plan.reset(id.toStdString());
  if (any) plan_changed();
}

void MainWindow::accept_above(double threshold) {
  if (!doc_) return;
  const int n = doc_->plan.accept_all_above(threshold);
  statusBar()->showMessage(
      tr("Accepted %1 groups at or above %2% traffic reduction").arg(n).arg(threshold * 100), 5000);
  if (n > 0) plan_changed();
}

void MainWindow::undo() {
  if (doc_ && doc_->plan.undo()) plan_changed();
}

void MainWindow::redo() {
  if (doc_ && doc_->plan.redo()) plan_changed();
}

bool MainWindow::save_plan(const QString& path) {
  if (!doc_) return false;
  try {
    doc_->plan.save(path.toStdString());
  } catch (const Error& e) {
    show_error(tr("Cannot save plan"), QString::fromUtf8(e.what()));
    return false;
  }
  plan_path_ = path;
  setWindowModified(false);
  QFile::remove(autosave_path());  // saved for real: the crash copy is stale
  statusBar()->showMessage(tr("Plan saved to %1").arg(path), 5000);
  return true;
}

bool MainWindow::load_plan(const QString& path) {
  if (!doc_) return false;
  if (opening_) {  // the analysis about to finish would replace it
    show_error(
        tr("Cannot load plan"),
        tr("%1: the model is still being analysed; load the plan when it is done").arg(path));
    return false;
  }
  try {
    FusionPlan plan = FusionPlan::load(path.toStdString());
    const auto missing = plan.bind(doc_->graph());
    candidates_->set_plan(nullptr);
    doc_->plan = std::move(plan);
    doc_->rebuild_node_groups();
    candidates_->set_plan(&doc_->plan);
    if (!missing.empty())
      statusBar()->showMessage(
          tr("Plan loaded; %1 groups dropped: their nodes are not in this model")
              .arg(doc_->plan.dropped_groups().size()),
          10'000);
  } catch (const Error& e) {
    show_error(tr("Cannot load plan"), QString::fromUtf8(e.what()));
    return false;
  }
  plan_path_ = path;
  setWindowModified(false);
  plan_changed(false);
  return true;
}

QString MainWindow::autosave_path() const {
  if (!doc_) return {};
  // One file per model path, so that two models never overwrite each other's plan.
  const QByteArray hash =
      QCryptographicHash::hash(QFileInfo(doc_->path).absoluteFilePath().toUtf8(),
                               QCryptographicHash::Sha1)
          .toHex()
          .left(12);
  return autosave_dir_ + QLatin1Char('/') + QFileInfo(doc_->path).completeBaseName() +
         QLatin1Char('-') + QString::fromLatin1(hash) + QStringLiteral(".plan.json");
}

void MainWindow::autosave() {
  if (!doc_ || !isWindowModified()) return;
  QDir().mkpath(autosave_dir_);
  try {
    doc_->plan.save(autosave_path().toStdString());
  } catch (const Error& e) {
    statusBar()->showMessage(tr("Autosave failed: %1").arg(QString::fromUtf8(e.what())), 5000);
  }
}

void MainWindow::select_fusion_group(int plan_index) {
  if (!doc_) return;
  scene_->select_fusion_group(plan_index);
  inspector_->show_fusion_group(*doc_, plan_index);
  if (side_by_side()) fused_pane_->show_plan_group(plan_index);
  // Bring its first member on screen, opening groups when it is folded away.
  const auto& groups = doc_->plan.groups();
  if (plan_index < 0 || std::size_t(plan_index) >= groups.size() ||
      groups[std::size_t(plan_index)].nodes.empty())
    return;
  bool folded = false;
  for (const std::string& name : groups[std::size_t(plan_index)].nodes) {
    const NodeId n = doc_->graph().find_node(name);
    BoxItem* box = scene_->box_of_node(n);
    if (n != kNoNode && (!box || box->item().kind != layout::Item::Node)) {
      expansion_.reveal(*doc_->tree, n);
      folded = true;
    }
  }
  if (folded) {  // lay out with the members open, then select again (on_layout_finished)
    focus_plan_group_ = plan_index;
    start_layout();
    return;
  }
  const NodeId first = doc_->graph().find_node(groups[std::size_t(plan_index)].nodes.front());
  if (first == kNoNode) return;
  if (BoxItem* box = scene_->box_of_node(first)) view_->reveal(box->sceneBoundingRect());
}

bool MainWindow::export_view(const QString& path) {
  const QRect area = view_->viewport()->rect();
  if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(area.size());
    svg.setViewBox(area);
    svg.setTitle(windowTitle().remove(QStringLiteral("[*]")));
    QPainter p(&svg);
    view_->render(&p, QRectF(area), area);
    return p.end();
  }
  QImage image(area.size() * view_->devicePixelRatioF(), QImage::Format_ARGB32_Premultiplied);
  image.setDevicePixelRatio(view_->devicePixelRatioF());
  image.fill(scene_->backgroundBrush().color());
  {
    QPainter p(&image);
    p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    view_->render(&p, QRectF(area), area);
  }
  if (!image.save(path)) {
    show_error(tr("Cannot export"), tr("%1: cannot write the image").arg(path));
    return false;
  }
  return true;
}

}  // namespace fx::views
