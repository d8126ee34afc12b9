// SPDX-License-Identifier: Apache-2.0
// MainWindow's public commands: each forwards to the controller that owns the concern
// (DocumentController, PlanController, ProfileController, ExportService) with what the
// window holds (the document, the timeline's lanes), and shows what comes back.
#include <QDockWidget>
#include <QImage>
#include <QPainter>
#include <QStatusBar>
#include <QSvgGenerator>

#include "profile/chrome_trace.h"
#include "util/error.h"
#include "views/before_after_result.h"
#include "views/code_view.h"
#include "views/document_controller.h"
#include "views/export_service.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/group_result_model.h"
#include "views/main_window.h"
#include "views/op_style.h"
#include "views/plan_controller.h"
#include "views/profile_controller.h"
#include "views/profile_summary.h"
#include "views/timeline_view.h"

namespace fx::views {

void MainWindow::open_model(const QString& path) {
  if (!maybe_save()) return;
  documents_->set_settings(chosen_settings());
  documents_->set_label_metrics(label_metrics(view_->font()));
  documents_->open(path);
}

void MainWindow::set_autosave_dir(const QString& dir) {
  plan_->set_autosave_dir(dir);
}

void MainWindow::accept_groups(const QStringList& ids) {
  plan_->accept(ids);
}

void MainWindow::reject_groups(const QStringList& ids) {
  plan_->reject(ids);
}

int MainWindow::reject_measured_slower() {
  std::vector<MeasuredGroup> measured;
  const GroupResultModel* m = profile_summary_->group_model();
  for (int i = 0; i < m->rowCount(); ++i) measured.push_back(m->group(i));
  return plan_->reject_measured_slower(measured);
}

void MainWindow::reset_groups(const QStringList& ids) {
  plan_->reset(ids);
}

void MainWindow::accept_above(double threshold) {
  plan_->accept_above(threshold);
}

void MainWindow::undo() {
  plan_->undo();
}

void MainWindow::redo() {
  plan_->redo();
}

bool MainWindow::save_plan(const QString& path) {
  return plan_->save(path);
}

bool MainWindow::load_plan(const QString& path) {
  if (doc() && documents_->is_opening()) {  // the analysis about to finish would replace it
    show_error(
        tr("Cannot load plan"),
        tr("%1: the model is still being analysed; load the plan when it is done").arg(path));
    return false;
  }
  return plan_->load(path);
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

void MainWindow::generate(int plan_group) {
  const auto d = doc();
  if (!d || plan_group < 0 || std::size_t(plan_group) >= d->plan.groups().size()) {
    statusBar()->showMessage(tr("Select a fusion group to generate its kernel"), 5000);
    return;
  }
  if (auto* dock = qobject_cast<QDockWidget*>(code_->parent())) {
    dock->show();
    dock->raise();
  }
  code_->generate(d, d->plan.groups()[std::size_t(plan_group)]);
}

bool MainWindow::export_fused_model(const QString& path) {
  return exports_->export_fused_model(doc(), path);
}

bool MainWindow::export_kernels(const QString& dir) {
  return exports_->export_kernels(doc(), dir);
}

bool MainWindow::export_traces(const QString& path) {
  std::vector<Timeline> lanes;
  for (int i = 0; i < timeline_->lane_count(); ++i) lanes.push_back(timeline_->lane(i));
  return exports_->export_traces(std::move(lanes), path);
}

bool MainWindow::export_report(const QString& path) {
  return exports_->export_report(
      doc(), {plan_->plan_path(), profiler_->result_json(), profiler_->result_origin()}, path);
}

bool MainWindow::export_running() const {
  return exports_->running();
}

void MainWindow::set_profiler(const QString& program) {
  profiler_->set_program(program);
}

void MainWindow::set_profile_timeout_ms(int ms) {
  profiler_->set_timeout_ms(ms);
}

bool MainWindow::profile_running() const {
  return profiler_->running();
}

void MainWindow::profile() {
  if (!doc()) {
    show_error(tr("Cannot profile"), tr("Open a model first"));
    emit profile_finished(false);
    return;
  }
  profiler_->start(*doc());
}

void MainWindow::cancel_profile() {
  profiler_->cancel();
}

bool MainWindow::load_profile_result(const QString& path) {
  return profiler_->load_result(path);
}

void MainWindow::show_profile_result(const BeforeAfterResult& r) {
  timeline_->clear();
  QStringList names;
  for (int i = 0; i < int(r.input.groups.size()); ++i) names << r.group_label(i);
  timeline_->set_group_names(names);
  timeline_->set_lane(r.before_laid_end_to_end ? tr("before*") : tr("before"), r.before);
  timeline_->set_lane(r.after_laid_end_to_end ? tr("after*") : tr("after"), r.after);
  profile_summary_->set_result(r);
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("TimelineDock"))) {
    dock->show();
    dock->raise();
    // Two lanes and the summary need room: give the dock half the window when it is
    // smaller (the user's own larger size is kept).
    if (!dock->isFloating() && dock->height() < height() / 2)
      resizeDocks({dock}, {height() / 2}, Qt::Vertical);
  }
  QString msg = tr("Profiled: speed-up %1").arg(format_speedup(r.input.speedup));
  if (r.before_laid_end_to_end || r.after_laid_end_to_end)
    msg += tr(" (* no trace: kernels laid end to end by median time)");
  if (!r.warnings.isEmpty()) msg += tr("; %1").arg(r.warnings.join(QStringLiteral("; ")));
  statusBar()->showMessage(msg, 15'000);
}

bool MainWindow::load_timeline(const QString& path, const QString& lane_title) {
  try {
    timeline_->set_lane(lane_title, read_trace(path.toStdString()));
  } catch (const Error& e) {
    show_error(tr("Cannot read timeline"), QString::fromUtf8(e.what()));
    return false;
  }
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("TimelineDock"))) dock->raise();
  statusBar()->showMessage(timeline_->summary(), 10'000);
  return true;
}

}  // namespace fx::views
