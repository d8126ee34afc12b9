// MainWindow's Export menu: fused model (.onnx), kernel sources + manifest, Chrome
// traces of the timeline, and the report (HTML/Markdown/JSON as `fxc report` writes
// it, with the last before/after result shown as its --profile; PDF through QPdfWriter). Inputs are
// copied on the UI thread; the work runs in the thread pool; a failure is shown as a message naming
// the file.
#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

#include <nlohmann/json.hpp>

#include "calibration/host_device.h"
#include "codegen/kernel_export.h"
#include "onnx/fused_model_export.h"
#include "profile/chrome_trace.h"
#include "report/report_writer.h"
#include "util/error.h"
#include "views/main_window.h"
#include "views/report_pdf.h"
#include "views/timeline_view.h"

namespace fx::views {

void MainWindow::build_export_menu(QMenu* file) {
  QMenu* menu = file->addMenu(tr("E&xport"));
  menu->setObjectName(QStringLiteral("ExportMenu"));
  auto ask = [this](const QString& title, const QString& filter) {
    return QFileDialog::getSaveFileName(this, title, QString(), filter);
  };
  menu->addAction(tr("&Fused Model (ONNX)…"), this, [this, ask] {
    const QString p = ask(tr("Export fused model"), tr("ONNX models (*.onnx)"));
    if (!p.isEmpty()) export_fused_model(p);
  });
  menu->addAction(tr("&Kernels (Sources + Manifest)…"), this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Export kernels to folder"));
    if (!d.isEmpty()) export_kernels(d);
  });
  export_traces_ = menu->addAction(tr("&Chrome Trace of the Timeline…"), this, [this, ask] {
    const QString p = ask(tr("Export Chrome trace"), tr("Chrome traces (*.json)"));
    if (!p.isEmpty()) export_traces(p);
  });
  export_traces_->setObjectName(QStringLiteral("ExportTracesAction"));
  menu->addAction(tr("&Report…"), this, [this, ask] {
    const QString p =
        ask(tr("Export report"), tr("HTML (*.html);;PDF (*.pdf);;Markdown (*.md);;JSON (*.json)"));
    if (!p.isEmpty()) export_report(p);
  });
  // Traces exist only once a timeline is loaded.
  connect(menu, &QMenu::aboutToShow, this,
          [this] { export_traces_->setEnabled(timeline_->lane_count() > 0); });
  export_traces_->setEnabled(false);
  connect(&export_job_, &QFutureWatcherBase::finished, this, [this] {
    hide_progress();
    const auto [ok, message] = export_job_.result();
    if (ok)
      statusBar()->showMessage(message, 8000);
    else
      show_error(tr("Export failed"), message);
    emit export_finished(ok, export_path_);
  });
}

bool MainWindow::export_running() const {
  return export_job_.isRunning();
}

bool MainWindow::start_export(const QString& what, const QString& path,
                              std::function<QString()> work) {
  if (opening_) {
    show_error(tr("Export"),
               tr("%1: the model is still being analysed; export when it is done").arg(path));
    return false;
  }
  if (export_job_.isRunning()) {
    show_error(tr("Export"), tr("%1: another export is still running").arg(path));
    return false;
  }
  export_path_ = path;
  show_progress(tr("Exporting %1…").arg(what), 0, 0);
  export_job_.setFuture(QtConcurrent::run([path, work = std::move(work)] {
    try {
      return std::pair<bool, QString>(true, work());
    } catch (const std::exception& e) {
      // Core errors about a file name it already; others get the path in front.
      QString msg = QString::fromUtf8(e.what());
      if (!msg.contains(path)) msg = path + QStringLiteral(": ") + msg;
      return std::pair<bool, QString>(false, msg);
    }
  }));
  return true;
}

bool MainWindow::export_fused_model(const QString& path) {
  if (!doc_) return false;
  std::vector<ExportGroup> groups;
  for (const FusionGroup* g : doc_->plan.accepted()) groups.push_back({g->id, g->nodes});
  auto doc = doc_;
  return start_export(tr("fused model"), path, [doc, groups, path] {
    const FusedExportResult r = fx::export_fused_model(doc->model, groups, path.toStdString());
    return tr("%1: %2 nodes → %3 (%4 fused functions, %5 skipped)")
        .arg(path)
        .arg(r.nodes_before)
        .arg(r.nodes_after)
        .arg(r.functions)
        .arg(r.skipped.size());
  });
}

bool MainWindow::export_kernels(const QString& dir) {
  if (!doc_) return false;
  std::vector<FusionGroup> groups;
  for (const FusionGroup* g : doc_->plan.accepted()) groups.push_back(*g);
  auto doc = doc_;
  return start_export(tr("kernels"), dir, [doc, groups, dir] {
    std::vector<const FusionGroup*> ptrs;
    for (const auto& g : groups) ptrs.push_back(&g);
    write_kernel_sources(doc->graph(), ptrs, dir.toStdString(), doc->path.toStdString());
    return tr("%1 kernel sources and manifest.json written to %2").arg(groups.size()).arg(dir);
  });
}

bool MainWindow::export_traces(const QString& path) {
  if (timeline_->lane_count() == 0) {
    show_error(tr("Export failed"), tr("%1: no timeline to export; profile first").arg(path));
    return false;
  }
  auto lanes = std::make_shared<std::vector<Timeline>>();
  for (int i = 0; i < timeline_->lane_count(); ++i) lanes->push_back(timeline_->lane(i));
  return start_export(tr("Chrome trace"), path, [lanes, path] {
    std::vector<const Timeline*> ptrs;
    for (const auto& t : *lanes) ptrs.push_back(&t);
    write_chrome_trace(path.toStdString(), ptrs);
    return tr("%1: %2 timelines written (open in Perfetto)").arg(path).arg(lanes->size());
  });
}

bool MainWindow::export_report(const QString& path) {
  if (!doc_) return false;
  if (!doc_->analysis) {
    show_error(tr("Export failed"), tr("%1: the model has no analysis to report").arg(path));
    return false;
  }
  const bool pdf = path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive);
  ReportFormat format = ReportFormat::Html;
  if (!pdf) {
    try {
      format = report_format_from_path(path.toStdString());
    } catch (const std::exception& e) {
      show_error(tr("Export failed"), QString::fromUtf8(e.what()));
      return false;
    }
  }
  auto doc = doc_;
  auto plan = std::make_shared<FusionPlan>(doc_->plan);
  auto analysis = std::make_shared<AnalysisResult>(*doc_->analysis);
  ReportOptions options;
  options.model_path = doc_->path.toStdString();
  options.plan_path = plan_path_.toStdString();
  options.device_arg = doc_->settings.device.toStdString();
  options.out_path = path.toStdString();
  // The last before/after result, parsed in the worker like `fxc report --profile`.
  options.profile_path =
      profile_json_.isEmpty() ? std::string() : profile_json_origin_.toStdString();
  const QByteArray profile_json = profile_json_;
  return start_export(
      tr("report"), path, [doc, plan, analysis, options, path, pdf, format, profile_json] {
        const DeviceProfile device = resolve_device(options.device_arg);
        nlohmann::json profile_doc;
        if (!profile_json.isEmpty()) {
          try {
            profile_doc = nlohmann::json::parse(profile_json.constBegin(), profile_json.constEnd());
          } catch (const nlohmann::json::exception& e) {  // it was read once: not expected
            throw FileError(options.profile_path, std::string("not JSON: ") + e.what());
          }
        }
        const ReportData data =
            gather_report(doc->graph(), doc->model.info, *plan, device, *analysis,
                          profile_json.isEmpty() ? nullptr : &profile_doc, options);
        if (pdf)
          write_report_pdf(QString::fromStdString(render_html_report(data)), path);
        else
          write_report(data, format, path.toStdString());
        return tr("Report written to %1").arg(path);
      });
}

}  // namespace fx::views
