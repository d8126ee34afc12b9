// SPDX-License-Identifier: Apache-2.0
// DocumentController without a window: opening runs in workers and ends with the
// analysis; a second open, or Cancel, makes every result of the first one stale (dropped
// by generation); a relayout after an expand; the graph swapped for fxc's canonical graph
// once shapes are known; a bad file is reported.
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "document_fixture.h"
#include "views/document_controller.h"

using fx::views::DocumentController;
using fx::views::model_arguments;
namespace t = fx::views::test;

class TestDocumentController : public QObject {
  Q_OBJECT
 private slots:
  void opens_and_emits_the_analysis() {
    DocumentController c;
    c.set_settings(t::h100_settings());
    QSignalSpy shown(&c, &DocumentController::document_shown);
    QSignalSpy applied(&c, &DocumentController::analysis_applied);
    QSignalSpy opened(&c, &DocumentController::opened);
    c.open(t::kTinyCnn);
    QVERIFY(c.is_busy());
    QVERIFY(c.progress().visible);
    QVERIFY(opened.wait(30000));
    QCOMPARE(shown.count(), 1);
    QCOMPARE(applied.count(), 1);
    const auto doc = c.document();
    QVERIFY(doc);
    // The canonical graph fxc reads: tiny_cnn's five BNs folded into their Convs.
    QCOMPARE(int(doc->graph().node_count()), 18);
    QVERIFY(doc->analysis.has_value());
    QVERIFY(!doc->plan.groups().empty());
    QVERIFY(!c.is_opening());
    QTRY_VERIFY(!c.is_busy());
    QVERIFY(!c.progress().visible);
  }

  void a_second_open_drops_the_first_ones_results() {
    DocumentController c;
    c.set_settings(t::h100_settings());
    QSignalSpy shown(&c, &DocumentController::document_shown);
    QSignalSpy opened(&c, &DocumentController::opened);
    // Every analysis applied must be for the document shown at that moment, and after
    // the second open only the second model's.
    QStringList applied_to;
    connect(&c, &DocumentController::analysis_applied, this,
            [&] { applied_to << c.document()->path; });
    c.open(t::kTinyCnn);
    QVERIFY(shown.wait(30000));  // the first model is shown; shapes and analysis run
    const quint64 first = c.generation();
    c.open(t::kTinyTransformer);
    QVERIFY(c.generation() > first);
    QVERIFY(opened.wait(30000));
    QTRY_VERIFY(!c.is_busy());
    const QString second = QFileInfo(t::kTinyTransformer).absoluteFilePath();
    QCOMPARE(c.document()->path, second);
    QCOMPARE(opened.count(), 1);
    QVERIFY(!applied_to.isEmpty());
    for (const QString& p : applied_to) QCOMPARE(p, second);
  }

  void cancel_drops_the_running_analysis() {
    DocumentController c;
    c.set_settings(t::h100_settings());
    QSignalSpy shown(&c, &DocumentController::document_shown);
    QSignalSpy applied(&c, &DocumentController::analysis_applied);
    QSignalSpy opened(&c, &DocumentController::opened);
    c.open(t::kTinyCnn);
    QVERIFY(shown.wait(30000));
    c.cancel();
    QVERIFY(!c.is_opening());
    QVERIFY(!c.progress().visible);
    QTRY_VERIFY_WITH_TIMEOUT(!c.is_busy(), 30000);
    QTest::qWait(50);
    QCOMPARE(applied.count(), 0);
    QCOMPARE(opened.count(), 0);
    QVERIFY(!c.document()->analysis.has_value());
    // The document stays usable: an analysis started now is applied.
    c.reanalyse();
    QVERIFY(applied.wait(30000));
    QVERIFY(c.document()->analysis.has_value());
  }

  void relayout_after_an_expand() {
    DocumentController c;
    c.set_settings(t::h100_settings());
    QSignalSpy opened(&c, &DocumentController::opened);
    c.open(t::kTinyCnn);
    QVERIFY(opened.wait(30000));
    QTRY_VERIFY(!c.is_busy());
    const auto doc = c.document();
    int layer1 = -1;
    for (std::size_t g = 0; g < doc->tree->group_count(); ++g)
      if (doc->tree->group(int(g)).path.rfind("layer1", 0) == 0 && layer1 < 0) layer1 = int(g);
    QVERIFY(layer1 > 0);
    QVERIFY(c.expansion().is_open(layer1));
    c.expansion().set_open(layer1, false);
    std::size_t boxes = 0;
    connect(&c, &DocumentController::layout_ready, this,
            [&](const fx::drawing::SceneLayout& l) { boxes = l.boxes.size(); });
    QSignalSpy ready(&c, &DocumentController::layout_ready);
    c.relayout();
    QVERIFY(ready.wait(10000));
    QVERIFY(boxes > 0);
    QCOMPARE(c.document(), doc);
  }

#ifdef FX_FXC_PATH
  // The explorer paints before shapes are known, so its first graph keeps the shape
  // arithmetic (tiny_transformer: Shape -> Gather -> ... of the dynamic batch and seq).
  // Once shapes are in, the model is read again with shape-folding and the document
  // swapped: the graph analysed and counted is fxc's canonical graph, node for node.
  void the_canonical_graph_is_fxcs_once_shapes_are_known() {
    DocumentController c;
    c.set_settings(t::h100_settings());
    int first_nodes = -1;
    connect(&c, &DocumentController::document_shown, this,
            [&] { first_nodes = int(c.document()->graph().node_count()); });
    QSignalSpy replaced(&c, &DocumentController::document_replaced);
    QSignalSpy opened(&c, &DocumentController::opened);
    c.open(t::kTinyTransformer);
    QVERIFY(opened.wait(30000));
    QCOMPARE(replaced.count(), 1);
    const auto doc = c.document();
    QVERIFY(doc->shapes_folded);

    QProcess fxc;
    fxc.start(QStringLiteral(FX_FXC_PATH),
              {QStringLiteral("inspect"), t::kTinyTransformer, QStringLiteral("--json")});
    QVERIFY(fxc.waitForFinished(60000));
    QCOMPARE(fxc.exitCode(), 0);
    const QJsonObject inspect = QJsonDocument::fromJson(fxc.readAllStandardOutput()).object();
    const int fxc_nodes = inspect.value(QStringLiteral("nodes")).toInt(-1);
    QVERIFY(fxc_nodes > 0);
    QVERIFY2(
        first_nodes > fxc_nodes,
        qPrintable(QStringLiteral("first paint %1 nodes, fxc %2").arg(first_nodes).arg(fxc_nodes)));
    QCOMPARE(int(doc->graph().node_count()), fxc_nodes);
    // ... and the analysis ran on it: its kernel count is the canonical graph's.
    QVERIFY(doc->analysis.has_value());
    QCOMPARE(doc->analysis->kernels_before, fxc_nodes);
    // A child fxc given this document's options reads the same graph: nothing disabled.
    QVERIFY(!model_arguments(doc->load_options()).contains(QStringLiteral("shape-folding")));
    for (const auto& p : doc->plan.disabled_passes()) QVERIFY(p != "shape-folding");
  }
#endif

  void a_bad_model_is_reported() {
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("bad.onnx"));
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a protobuf");
    file.close();
    DocumentController c;
    QSignalSpy failed(&c, &DocumentController::failed);
    c.open(bad);
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.front().at(1).toString().contains(QStringLiteral("bad.onnx")));
    QVERIFY(!c.document());
  }
};

QTEST_MAIN(TestDocumentController)
#include "tst_document_controller.moc"
