// SPDX-License-Identifier: Apache-2.0
// The main flow, offscreen: open the sample model -> graph items in the scene ->
// candidates listed -> accept -> plan saved; plus expand/collapse, search, undo,
// export, and a bad file that must not take the window down.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "views/candidate_model.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/inspector.h"
#include "views/main_window.h"

using fx::views::MainWindow;

namespace {

const QString kModel = QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx");

// A window with an H100 profile (the cpu-host profile would run a calibration) and
// its autosaves in a temporary folder.
struct Fixture {
  QTemporaryDir dir;
  MainWindow window;
  Fixture() {
    fx::views::AnalysisSettings s;
    s.device = QStringLiteral("nvidia-h100");
    window.set_analysis_settings(s);
    window.set_autosave_dir(dir.path());
    window.resize(1200, 800);
    window.show();
  }
  bool open(const QString& path = kModel) {
    QSignalSpy opened(&window, &MainWindow::model_opened);
    window.open_model(path);
    return opened.wait(20000) || opened.count() > 0;
  }
};

int node_boxes(fx::views::GraphScene* scene) {
  int n = 0;
  for (QGraphicsItem* it : scene->items())
    if (auto* b = qgraphicsitem_cast<fx::views::BoxItem*>(it);
        b && b->item().kind == fx::drawing::Item::Node)
      ++n;
  return n;
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void open_accept_save() {
    QVERIFY(QFile::exists(kModel));
    Fixture f;
    QAbstractItemModelTester tester(f.window.candidate_model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(f.open());
    const auto* doc = f.window.document();
    QVERIFY(doc);
    QCOMPARE(int(doc->graph().node_count()), 23);
    // A small model opens fully expanded: every op is its own box.
    QCOMPARE(node_boxes(f.window.scene()), 23);
    QVERIFY(doc->analysis.has_value());
    const int rows = f.window.candidate_model()->rowCount();
    QVERIFY2(rows > 0, "tiny_cnn has Conv+BN+ReLU chains: candidates expected");
    QVERIFY(!f.window.isWindowModified());

    const QString id =
        f.window.candidate_model()->index(0, fx::views::CandidateModel::Group).data().toString();
    f.window.accept_groups({id});
    QVERIFY(f.window.isWindowModified());
    QCOMPARE(
        f.window.candidate_model()->index(0, fx::views::CandidateModel::Status).data().toString(),
        QStringLiteral("accepted"));

    const QString plan = f.dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(f.window.save_plan(plan));
    QVERIFY(!f.window.isWindowModified());
    QFile file(plan);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    int accepted = 0;
    for (const auto& g : json.value(QStringLiteral("groups")).toArray()) {
      if (g.toObject().value(QStringLiteral("status")).toString() == QLatin1String("accepted")) {
        ++accepted;
        QCOMPARE(g.toObject().value(QStringLiteral("id")).toString(), id);
      }
    }
    QCOMPARE(accepted, 1);

    // Undo goes through the plan, the table follows; reload restores the decision.
    f.window.undo();
    QCOMPARE(
        f.window.candidate_model()->index(0, fx::views::CandidateModel::Status).data().toString(),
        QStringLiteral("candidate"));
    QVERIFY(f.window.load_plan(plan));
    QCOMPARE(
        f.window.candidate_model()->index(0, fx::views::CandidateModel::Status).data().toString(),
        QStringLiteral("accepted"));
  }

  void collapse_and_expand_a_group_off_the_ui_thread() {
    Fixture f;
    QVERIFY(f.open());
    const auto* doc = f.window.document();
    // layer1 is a scope group; collapsing it replaces its 7 ops by one box.
    int layer1 = -1;
    for (std::size_t g = 0; g < doc->tree->group_count(); ++g)
      if (doc->tree->group(int(g)).path.rfind("layer1", 0) == 0 && layer1 < 0) layer1 = int(g);
    QVERIFY(layer1 > 0);
    QSignalSpy shown(&f.window, &MainWindow::layout_shown);
    f.window.toggle_group(layer1);
    QVERIFY(shown.wait(10000));
    QCOMPARE(node_boxes(f.window.scene()), 23 - doc->tree->group(layer1).node_count);
    f.window.toggle_group(layer1);
    QVERIFY(shown.wait(10000));
    QCOMPARE(node_boxes(f.window.scene()), 23);
  }

  void selection_fills_the_inspector_and_search_reveals() {
    Fixture f;
    QVERIFY(f.open());
    const fx::NodeId conv = f.window.document()->graph().find_node("/layer1/0/conv1/Conv");
    QVERIFY(conv != fx::kNoNode);
    f.window.reveal_node(conv);
    QCOMPARE(f.window.inspector()->value_of(QStringLiteral("Op")), QStringLiteral("Conv"));
    QVERIFY(!f.window.inspector()->value_of(QStringLiteral("Bytes read")).isEmpty());
    std::size_t bns = 0;
    for (const auto& n : f.window.document()->graph().nodes())
      bns += n.op_type == "BatchNormalization";
    QVERIFY(bns > 0);
    QCOMPARE(f.window.scene()->search(QStringLiteral("batchnorm")).size(), bns);
    QCOMPARE(f.window.scene()->search(QStringLiteral("/layer1/0/conv1/Conv")).size(),
             std::size_t(1));
  }

  void exports_png_and_svg() {
    Fixture f;
    QVERIFY(f.open());
    const QString png = f.dir.filePath(QStringLiteral("view.png"));
    const QString svg = f.dir.filePath(QStringLiteral("view.svg"));
    QVERIFY(f.window.export_view(png));
    QVERIFY(f.window.export_view(svg));
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 100);
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray text = s.readAll();
    QVERIFY(text.contains("<svg"));
    QVERIFY(text.contains("Conv"));  // drawn labels, not a bitmap
  }

  void a_bad_model_is_reported_not_fatal() {
    Fixture f;
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("bad.onnx"));
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a protobuf");
    file.close();
    QSignalSpy failed(&f.window, &MainWindow::failed);
    f.window.open_model(bad);
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.front().front().toString().contains(QStringLiteral("bad.onnx")));
    QVERIFY(f.window.document() == nullptr);
    // And the window still opens a good model afterwards.
    QVERIFY(f.open());
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
