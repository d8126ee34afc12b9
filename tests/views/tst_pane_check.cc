// SPDX-License-Identifier: Apache-2.0
// What `fusion-explorer --check` reports, on the models the tests ship (a CNN with a
// residual block, a GPT-2-like transformer): every pane either shows something or says
// why it is empty, and opening raises no error. The report itself flags an empty pane
// that says nothing.
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "views/main_window.h"
#include "views/pane_check.h"

using fx::views::MainWindow;
using fx::views::PaneState;

class TestPaneCheck : public QObject {
  Q_OBJECT
 private slots:
  void an_unexplained_empty_pane_is_a_problem() {
    const std::vector<PaneState> panes = {
        {QStringLiteral("graph"), false, {}, 12},
        {QStringLiteral("timeline"), true, QStringLiteral("No timeline: profile"), 0},
        {QStringLiteral("candidates"), true, QStringLiteral("  "), 0}};
    const QStringList problems = fx::views::pane_problems(panes);
    QCOMPARE(problems, QStringList{QStringLiteral("candidates: empty with no explanation")});
    const QJsonObject report = fx::views::check_report(QStringLiteral("m.onnx"), panes, {}, {});
    QVERIFY(!report.value(QStringLiteral("ok")).toBool());
    QCOMPARE(report.value(QStringLiteral("panes")).toArray().size(), 3);
    // Clean panes but an error: not ok either.
    const QJsonObject errored = fx::views::check_report(
        QStringLiteral("m.onnx"), {panes[0], panes[1]}, {QStringLiteral("Cannot open")}, {});
    QVERIFY(!errored.value(QStringLiteral("ok")).toBool());
    QVERIFY(fx::views::check_report(QStringLiteral("m.onnx"), {panes[0], panes[1]}, {}, {})
                .value(QStringLiteral("ok"))
                .toBool());
  }

  void sample_models_open_with_every_pane_explained_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("tiny_cnn") << QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx");
    QTest::newRow("tiny_transformer")
        << QStringLiteral(FX_RESOURCES_DIR "/models/tiny_transformer.onnx");
  }
  void sample_models_open_with_every_pane_explained() {
    QFETCH(QString, model);
    QTemporaryDir dir;
    MainWindow window;
    fx::views::AnalysisSettings s;
    s.device = QStringLiteral("nvidia-h100");
    window.set_analysis_settings(s);
    window.set_autosave_dir(dir.path());
    window.resize(1200, 800);
    window.show();
    QSignalSpy failed(&window, &MainWindow::failed);
    QSignalSpy opened(&window, &MainWindow::model_opened);
    window.open_model(model);
    QVERIFY(opened.wait(30000) || opened.count() > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!window.is_busy(), 30000);
    const auto panes = fx::views::pane_states(window);
    QCOMPARE(panes.size(), std::size_t(4));
    for (const PaneState& p : panes)
      QVERIFY2(!p.empty || !p.explanation.isEmpty(), qPrintable(p.pane));
    QVERIFY(!panes[0].empty);  // the graph
    QVERIFY(panes[0].items > 0);
    // No profile yet: the timeline says how to get one.
    QVERIFY(panes[3].empty);
    QVERIFY(panes[3].explanation.contains(QStringLiteral("Profile")));
    QCOMPARE(failed.count(), 0);
    QVERIFY(fx::views::pane_problems(panes).isEmpty());
  }

  // Before a model and after one that did not open (a truncated file), the empty graph
  // and inspector say why and what to do; the graph names the file's problem.
  void empty_panes_say_why_before_and_after_a_failed_open() {
    QTemporaryDir dir;
    MainWindow window;
    window.set_autosave_dir(dir.path());
    window.resize(1200, 800);
    window.show();
    auto panes = fx::views::pane_states(window);
    QVERIFY(panes[0].empty && panes[2].empty);
    QVERIFY2(panes[0].explanation.contains(QStringLiteral("Open Model")),
             qPrintable(panes[0].explanation));
    QVERIFY(!panes[2].explanation.isEmpty());
    QVERIFY2(panes[1].explanation.contains(QStringLiteral("No model open")),
             qPrintable(panes[1].explanation));
    QVERIFY(fx::views::pane_problems(panes).isEmpty());

    QFile in(QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QString cut = dir.filePath(QStringLiteral("truncated.onnx"));
    QFile out(cut);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(in.read(in.size() / 3));
    out.close();
    QSignalSpy failed(&window, &MainWindow::failed);
    window.open_model(cut);
    QVERIFY(failed.wait(30000) || failed.count() > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!window.is_busy(), 30000);
    panes = fx::views::pane_states(window);
    QVERIFY(panes[0].empty);
    QVERIFY2(panes[0].explanation.contains(QStringLiteral("truncated.onnx")) &&
                 panes[0].explanation.contains(QStringLiteral("Open Model")),
             qPrintable(panes[0].explanation));
    QVERIFY(fx::views::pane_problems(panes).isEmpty());
  }
};

QTEST_MAIN(TestPaneCheck)
#include "tst_pane_check.moc"
