// SPDX-License-Identifier: Apache-2.0
// ExportService without a window: the four exports write their files into a temporary
// folder; refusals (no timeline, no analysis, the document still being analysed,
// another export running) are reported naming the file; Cancel drops the result.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "document_fixture.h"
#include "profile/chrome_trace.h"
#include "views/export_service.h"
#include "views/plan_controller.h"

using fx::views::ExportService;
namespace t = fx::views::test;

namespace {

// Runs one export and waits for it; true when it finished and wrote its file.
bool run(ExportService& s, const std::function<bool()>& start, QString* message = nullptr) {
  QSignalSpy finished(&s, &ExportService::finished);
  if (!start()) return false;
  if (!finished.wait(60000)) return false;
  if (message) *message = finished.front().at(2).toString();
  return finished.front().front().toBool();
}

}  // namespace

class TestExportService : public QObject {
  Q_OBJECT
 private slots:
  void writes_the_four_exports() {
    QTemporaryDir dir;
    auto doc = t::analysed_document();
    fx::views::PlanController plan;
    plan.set_document(doc);
    QVERIFY(plan.accept(t::group_ids(*doc)));
    ExportService s;

    const QString onnx = dir.filePath(QStringLiteral("fused.onnx"));
    QString message;
    QVERIFY(run(
        s, [&] { return s.export_fused_model(doc, onnx); }, &message));
    QVERIFY(QFile(onnx).size() > 0);
    QVERIFY2(message.contains(QStringLiteral("fused functions")), qPrintable(message));

    const QString kernels = dir.filePath(QStringLiteral("kernels"));
    QVERIFY(QDir().mkpath(kernels));
    QVERIFY(run(s, [&] { return s.export_kernels(doc, kernels); }));
    QVERIFY(QFile::exists(kernels + QStringLiteral("/manifest.json")));

    fx::Timeline lane;
    fx::KernelEvent e;
    e.name = "conv";
    e.start_us = 0;
    e.duration_us = 10;
    lane.events.push_back(e);
    const QString trace = dir.filePath(QStringLiteral("trace.json"));
    QVERIFY(run(s, [&] { return s.export_traces({lane}, trace); }));
    QCOMPARE(fx::read_trace(trace.toStdString()).events.size(), std::size_t(1));

    for (const char* name : {"report.html", "report.md", "report.json", "report.pdf"}) {
      const QString report = dir.filePath(QString::fromLatin1(name));
      QVERIFY2(run(s, [&] { return s.export_report(doc, {}, report); }), name);
      QVERIFY2(QFile(report).size() > 0, name);
    }
    // The report names the plan file it was given.
    const QString js = dir.filePath(QStringLiteral("named.json"));
    QVERIFY(run(s, [&] { return s.export_report(doc, {QStringLiteral("my-plan.json"), {}, {}}, js); }));
    QFile f(js);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("my-plan.json"));
  }

  void refusals_name_the_file() {
    QTemporaryDir dir;
    auto doc = t::analysed_document();
    ExportService s;
    QSignalSpy failed(&s, &ExportService::failed);
    const QString trace = dir.filePath(QStringLiteral("trace.json"));
    QVERIFY(!s.export_traces({}, trace));
    QVERIFY(failed.back().at(1).toString().contains(trace));

    const QString bad = dir.filePath(QStringLiteral("report.txt"));
    QVERIFY(!s.export_report(doc, {}, bad));
    QVERIFY(failed.back().at(1).toString().contains(QStringLiteral("report.txt")));

    auto unanalysed = std::make_shared<fx::views::ModelDocument>();
    QVERIFY(!s.export_report(unanalysed, {}, dir.filePath(QStringLiteral("r.html"))));
    QVERIFY(failed.back().at(1).toString().contains(QStringLiteral("no analysis")));

    bool busy = true;
    s.set_document_busy([&] { return busy; });
    const QString onnx = dir.filePath(QStringLiteral("fused.onnx"));
    QVERIFY(!s.export_fused_model(doc, onnx));
    QVERIFY(failed.back().at(1).toString().contains(onnx));
    busy = false;

    // A file that cannot be written: finished(false) with the error naming it.
    QString message;
    QVERIFY(!run(
        s, [&] { return s.export_report(doc, {}, QStringLiteral("/nonexistent-dir/x/r.html")); },
        &message));
    QVERIFY2(message.contains(QStringLiteral("/nonexistent-dir/x")), qPrintable(message));
  }

  void one_at_a_time_and_cancel() {
    QTemporaryDir dir;
    auto doc = t::analysed_document();
    ExportService s;
    QSignalSpy failed(&s, &ExportService::failed);
    QSignalSpy finished(&s, &ExportService::finished);
    QSignalSpy cancelled(&s, &ExportService::cancelled);
    const QString pdf = dir.filePath(QStringLiteral("a.pdf"));
    QVERIFY(s.export_report(doc, {}, pdf));
    const bool was_running = s.running();
    if (was_running) {
      QVERIFY(!s.export_report(doc, {}, dir.filePath(QStringLiteral("b.pdf"))));
      QVERIFY(failed.back().at(1).toString().contains(QStringLiteral("another export")));
      s.cancel();
      QVERIFY(!s.running());
      QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 60000);
      QCOMPARE(cancelled.front().front().toString(), pdf);
      QCOMPARE(finished.count(), 0);
    } else {  // it ended before the test could ask: nothing to cancel
      QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    }
    QTRY_VERIFY(!s.worker_running());
    // After a cancel the next export runs normally.
    QVERIFY(run(s, [&] { return s.export_report(doc, {}, dir.filePath(QStringLiteral("c.md"))); }));
  }
};

QTEST_MAIN(TestExportService)
#include "tst_export_service.moc"
