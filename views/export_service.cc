// SPDX-License-Identifier: Apache-2.0
#include "views/export_service.h"

#include <QtConcurrent/QtConcurrentRun>

#include <nlohmann/json.hpp>

#include "calibration/host_device.h"
#include "codegen/kernel_export.h"
#include "onnx/fused_model_export.h"
#include "profile/chrome_trace.h"
#include "report/report_writer.h"
#include "util/error.h"
#include "views/model_document.h"
#include "views/report_pdf.h"

namespace fx::views {

ExportService::ExportService(QObject* parent) : QObject(parent) {
  connect(&job_, &QFutureWatcherBase::finished, this, &ExportService::on_finished);
}

ExportService::~ExportService() {
  job_.waitForFinished();
}

void ExportService::cancel() {
  if (job_.isRunning()) cancelled_ = true;
}

bool ExportService::start(const QString& what, const QString& path, std::function<QString()> work) {
  if (document_busy_ && document_busy_()) {
    emit failed(tr("Export"),
                tr("%1: the model is still being analysed; export when it is done").arg(path));
    return false;
  }
  if (job_.isRunning()) {
    emit failed(tr("Export"), tr("%1: another export is still running").arg(path));
    return false;
  }
  what_ = what;
  path_ = path;
  cancelled_ = false;
  job_.setFuture(QtConcurrent::run([path, work = std::move(work)] {
    try {
      return std::pair<bool, QString>(true, work());
    } catch (const std::exception& e) {
      // Core errors about a file name it already; others get the path in front.
      QString msg = QString::fromUtf8(e.what());
      if (!msg.contains(path)) msg = path + QStringLiteral(": ") + msg;
      return std::pair<bool, QString>(false, msg);
    }
  }));
  emit started(what);
  return true;
}

void ExportService::on_finished() {
  if (cancelled_) {
    cancelled_ = false;
    emit cancelled(path_);
    return;
  }
  const auto [ok, message] = job_.result();
  emit finished(ok, path_, message);
}

bool ExportService::export_fused_model(std::shared_ptr<ModelDocument> doc, const QString& path) {
  if (!doc) return false;
  std::vector<ExportGroup> groups;
  for (const FusionGroup* g : doc->plan.accepted()) groups.push_back({g->id, g->nodes});
  return start(tr("fused model"), path, [doc, groups, path] {
    const FusedExportResult r = fx::export_fused_model(doc->model, groups, path.toStdString());
    return tr("%1: %2 nodes → %3 (%4 fused functions, %5 skipped)")
        .arg(path)
        .arg(r.nodes_before)
        .arg(r.nodes_after)
        .arg(r.functions)
        .arg(r.skipped.size());
  });
}

bool ExportService::export_kernels(std::shared_ptr<ModelDocument> doc, const QString& dir) {
  if (!doc) return false;
  std::vector<FusionGroup> groups;
  for (const FusionGroup* g : doc->plan.accepted()) groups.push_back(*g);
  return start(tr("kernels"), dir, [doc, groups, dir] {
    std::vector<const FusionGroup*> ptrs;
    for (const auto& g : groups) ptrs.push_back(&g);
    write_kernel_sources(doc->graph(), ptrs, dir.toStdString(), doc->path.toStdString());
    return tr("%1 kernel sources and manifest.json written to %2").arg(groups.size()).arg(dir);
  });
}

bool ExportService::export_traces(std::vector<Timeline> lanes_in, const QString& path) {
  if (lanes_in.empty()) {
    emit failed(tr("Export failed"), tr("%1: no timeline to export; profile first").arg(path));
    return false;
  }
  auto lanes = std::make_shared<std::vector<Timeline>>(std::move(lanes_in));
  return start(tr("Chrome trace"), path, [lanes, path] {
    std::vector<const Timeline*> ptrs;
    for (const auto& t : *lanes) ptrs.push_back(&t);
    write_chrome_trace(path.toStdString(), ptrs);
    return tr("%1: %2 timelines written (open in Perfetto)").arg(path).arg(lanes->size());
  });
}

bool ExportService::export_report(std::shared_ptr<ModelDocument> doc, const ReportInputs& inputs,
                                  const QString& path) {
  if (!doc) return false;
  if (!doc->analysis) {
    emit failed(tr("Export failed"), tr("%1: the model has no analysis to report").arg(path));
    return false;
  }
  const bool pdf = path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive);
  ReportFormat format = ReportFormat::Html;
  if (!pdf) {
    try {
      format = report_format_from_path(path.toStdString());
    } catch (const std::exception& e) {
      emit failed(tr("Export failed"), QString::fromUtf8(e.what()));
      return false;
    }
  }
  auto plan = std::make_shared<FusionPlan>(doc->plan);
  auto analysis = std::make_shared<AnalysisResult>(*doc->analysis);
  ReportOptions options;
  options.model_path = doc->path.toStdString();
  options.plan_path = inputs.plan_path.toStdString();
  options.device_arg = doc->settings.device.toStdString();
  options.out_path = path.toStdString();
  // The before/after result, parsed in the worker like `fxc report --profile`.
  options.profile_path =
      inputs.profile_json.isEmpty() ? std::string() : inputs.profile_origin.toStdString();
  const QByteArray profile_json = inputs.profile_json;
  return start(tr("report"), path, [doc, plan, analysis, options, path, pdf, format, profile_json] {
    const DeviceProfile device = resolve_device(options.device_arg, doc->graph());
    nlohmann::json profile_doc;
    if (!profile_json.isEmpty()) {
      try {
        profile_doc = nlohmann::json::parse(profile_json.constBegin(), profile_json.constEnd());
      } catch (const nlohmann::json::exception& e) {  // it was read once: not expected
        throw FileError(options.profile_path, std::string("not JSON: ") + e.what());
      }
    }
    const ReportData data = gather_report(doc->graph(), doc->model.info, *plan, device, *analysis,
                                          profile_json.isEmpty() ? nullptr : &profile_doc, options);
    if (pdf)
      write_report_pdf(QString::fromStdString(render_html_report(data)), path);
    else
      write_report(data, format, path.toStdString());
    return tr("Report written to %1").arg(path);
  });
}

}  // namespace fx::views
