// SPDX-License-Identifier: Apache-2.0
#pragma once
// The four exports, without a window: the fused model (.onnx), the kernel sources with
// their manifest, Chrome traces of timeline lanes, and the report (HTML/Markdown/JSON as
// `fxc report` writes it, with a before/after result as its --profile; PDF through
// QPdfWriter). Inputs are copied on the UI thread; the work runs in the thread pool,
// one export at a time; `finished` names the file and says what was written or why not.
//
// Cancel drops the running export's result (core writes without a cancellation
// point, so the worker ends on its own); `cancelled` then comes instead of `finished`.

#include <QByteArray>
#include <QFutureWatcher>
#include <QObject>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "profile/timeline.h"

namespace fx::views {

struct ModelDocument;

class ExportService : public QObject {
  Q_OBJECT
 public:
  // What a report adds to the document: the plan file it names and the last
  // before/after result (empty: none) with the name it goes by.
  struct ReportInputs {
    QString plan_path;
    QByteArray profile_json;
    QString profile_origin;
  };

  explicit ExportService(QObject* parent = nullptr);
  ~ExportService() override;  // waits for the running export

  // While this says the document is still being analysed, exports are refused.
  void set_document_busy(std::function<bool()> busy) { document_busy_ = std::move(busy); }

  // Each returns false when nothing was started: no document, or after `failed`.
  bool export_fused_model(std::shared_ptr<ModelDocument> doc, const QString& path);
  bool export_kernels(std::shared_ptr<ModelDocument> doc, const QString& dir);
  bool export_traces(std::vector<Timeline> lanes, const QString& path);
  bool export_report(std::shared_ptr<ModelDocument> doc, const ReportInputs& inputs,
                     const QString& path);  // .html .md .json .pdf by suffix
  bool running() const { return job_.isRunning() && !cancelled_; }
  // Whether a worker still reads a document (a cancelled one too).
  bool worker_running() const { return job_.isRunning(); }
  QString what() const { return what_; }  // of the running export, e.g. "report"
  void cancel();

 signals:
  void started(const QString& what);
  // `message`: the summary of what was written, or the error naming the file.
  void finished(bool ok, const QString& path, const QString& message);
  void cancelled(const QString& path);  // instead of `finished`, after cancel()
  void failed(const QString& title, const QString& message);

 private:
  // Runs `work` (which throws on failure and returns a summary) in the thread pool.
  bool start(const QString& what, const QString& path, std::function<QString()> work);
  void on_finished();

  QFutureWatcher<std::pair<bool, QString>> job_;  // ok, summary or error
  QString what_, path_;
  bool cancelled_ = false;
  std::function<bool()> document_busy_;
};

}  // namespace fx::views
