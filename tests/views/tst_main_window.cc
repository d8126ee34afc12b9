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

#include <QDirIterator>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>

#include "analysis/plan_totals.h"
#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/fused_graph_pane.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/help.h"
#include "views/inspector.h"
#include "views/main_window.h"
#include "views/timeline_view.h"

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
    // The graph fxc analyses (BN folded into its Conv, as `fxc analyze` reads it).
    const fx::LoadedModel as_fxc =
        fx::load_onnx(kModel.toStdString(), fx::command_load_options({}, {}, false));
    QCOMPARE(doc->graph().node_count(), as_fxc.graph.node_count());
    QCOMPARE(int(doc->graph().node_count()), 18);
    // A small model opens fully expanded: every op is its own box.
    QCOMPARE(node_boxes(f.window.scene()), 18);
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
    QCOMPARE(node_boxes(f.window.scene()), 18 - doc->tree->group(layer1).node_count);
    f.window.toggle_group(layer1);
    QVERIFY(shown.wait(10000));
    QCOMPARE(node_boxes(f.window.scene()), 18);
  }

  void selection_fills_the_inspector_and_search_reveals() {
    Fixture f;
    QVERIFY(f.open());
    const fx::NodeId conv = f.window.document()->graph().find_node("/layer1/0/conv1/Conv");
    QVERIFY(conv != fx::kNoNode);
    f.window.reveal_node(conv);
    QCOMPARE(f.window.inspector()->value_of(QStringLiteral("Op")), QStringLiteral("Conv"));
    QVERIFY(!f.window.inspector()->value_of(QStringLiteral("Bytes read")).isEmpty());
    // The block's BatchNormalization was folded into this Conv (as fxc reads the model):
    // the Conv's box carries it as a badge, its tip and the inspector name it.
    QVERIFY2(f.window.inspector()
                 ->value_of(QStringLiteral("Folded in"))
                 .contains(QStringLiteral("BatchNormalization '/layer1/0/bn1/BatchNormalization'")),
             qPrintable(f.window.inspector()->value_of(QStringLiteral("Folded in"))));
    fx::views::BoxItem* box = f.window.scene()->box_of_node(conv);
    QVERIFY(box);
    QCOMPARE(box->badge(), QStringLiteral("+BN"));
    QVERIFY2(box->toolTip().contains(QStringLiteral("/layer1/0/bn1/BatchNormalization")),
             qPrintable(box->toolTip()));
    std::size_t bns = 0, badges = 0;
    for (const auto& n : f.window.document()->graph().nodes()) {
      bns += n.op_type == "BatchNormalization";
      const fx::NodeId id = f.window.document()->graph().find_node(n.name);
      if (auto* b = f.window.scene()->box_of_node(id); b && !b->badge().isEmpty()) ++badges;
    }
    QCOMPARE(bns, std::size_t(0));
    QCOMPARE(badges, std::size_t(5));  // tiny_cnn's five Conv + BN pairs
    QCOMPARE(f.window.scene()->search(QStringLiteral("/layer1/0/conv1/Conv")).size(),
             std::size_t(1));
    // Searching the folded BN's name (as the user's model names it) finds its Conv, and
    // searching the op type finds the five Convs that absorbed one.
    const auto by_bn = f.window.scene()->search(QStringLiteral("/layer1/0/bn1/BatchNormalization"));
    QCOMPARE(by_bn.size(), std::size_t(1));
    QCOMPARE(by_bn.front(), conv);
    QCOMPARE(f.window.scene()->search(QStringLiteral("BatchNormalization")).size(), std::size_t(5));
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

  // Room to work: with no saved dock layout the graph gets most of the window's height
  // (the candidate table, sized at construction, used to grow with the window as much as
  // the graph and took half of it).
  void the_graph_gets_most_of_the_height() {
    QSettings().remove(QStringLiteral("window/state"));
    QSettings().remove(QStringLiteral("window/geometry"));
    Fixture f;
    QVERIFY(f.open());
    QTRY_VERIFY2(f.window.view()->height() > f.window.height() * 55 / 100,
                 qPrintable(QStringLiteral("graph %1 of %2 px")
                                .arg(f.window.view()->height())
                                .arg(f.window.height())));
  }

  // Status bar, fused view, candidate panel and report: one set of numbers, the plan's.
  void every_count_comes_from_the_plan() {
    Fixture f;
    QVERIFY(f.open());
    const auto* doc = f.window.document();
    QVERIFY(doc->plan.groups().size() >= 2);
    f.window.accept_groups({QString::fromStdString(doc->plan.groups()[0].id)});
    const fx::PlanTotals t = fx::plan_totals(*doc->analysis, doc->plan);
    QCOMPARE(t.accepted, 1);
    // Not every candidate: only the accepted one is counted as fused.
    QVERIFY(t.kernels_after > doc->analysis->kernels_after);
    const QString kernels =
        QStringLiteral("kernels %1 → %2").arg(t.kernels_before).arg(t.kernels_after);
    const QString stats = f.window.findChild<QLabel*>(QStringLiteral("StatsLabel"))->text();
    QVERIFY2(stats.contains(kernels), qPrintable(stats));
    QVERIFY2(stats.contains(QStringLiteral("1 of %1 groups accepted").arg(t.groups)),
             qPrintable(stats));

    QSignalSpy built(f.window.fused_pane(), &fx::views::FusedGraphPane::graph_built);
    f.window.set_side_by_side(true);
    QVERIFY(built.wait(20000));
    const QString caption =
        f.window.fused_pane()->findChild<QLabel*>(QStringLiteral("FusedCaption"))->text();
    QVERIFY2(caption.contains(QStringLiteral("%1 kernels (1 of %2 groups accepted)")
                                  .arg(t.kernels_after)
                                  .arg(t.groups)),
             qPrintable(caption));

    const QString md = f.dir.filePath(QStringLiteral("report.md"));
    QSignalSpy exported(&f.window, &MainWindow::export_finished);
    QVERIFY(f.window.export_report(md));
    QVERIFY(exported.count() > 0 || exported.wait(30000));
    QFile report(md);
    QVERIFY(report.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(report.readAll());
    QVERIFY2(text.contains(
                 QStringLiteral("With the 1 of %1 groups the plan accepts fused: kernels %2 -> %3")
                     .arg(t.groups)
                     .arg(t.kernels_before)
                     .arg(t.kernels_after)),
             qPrintable(text.left(3000)));
    QVERIFY(!text.contains(QStringLiteral("every group fused")));
    // IEC units everywhere: the status bar's parameter size as the report writes it.
    QVERIFY(stats.contains(QStringLiteral("KiB")) || stats.contains(QStringLiteral("MiB")));
  }

  void a_new_model_starts_unfiltered_and_empty_panes_say_why() {
    Fixture f;
    QVERIFY(f.open());
    auto* panel = f.window.candidate_panel();
    QVERIFY(panel->empty_note().isEmpty());
    auto* filter = panel->findChild<QLineEdit*>();
    QVERIFY(filter);
    filter->setText(QStringLiteral("no group matches this"));
    QVERIFY2(panel->empty_note().contains(QStringLiteral("hidden by the filter")),
             qPrintable(panel->empty_note()));
    // The timeline without a profile says what to do, with a menu path that exists.
    QVERIFY(
        f.window.timeline()->summary().contains(QStringLiteral("Tools > Profile Before/After")));
    QVERIFY(f.open());  // the same model again: a new document
    QVERIFY(filter->text().isEmpty());
    QVERIFY(panel->empty_note().isEmpty());
    QVERIFY(f.window.candidate_model()->rowCount() > 0);

    // Opt level 0: an empty table that says why.
    fx::views::AnalysisSettings s;
    s.device = QStringLiteral("nvidia-h100");
    s.opt_level = 0;
    f.window.set_analysis_settings(s);
    QVERIFY(f.open());
    QCOMPARE(f.window.candidate_model()->rowCount(), 0);
    QVERIFY2(panel->empty_note().contains(QStringLiteral("Opt level 0")),
             qPrintable(panel->empty_note()));
  }

  // Shape-folding swaps the document once shapes are known (DocumentController::
  // document_replaced): what the user selected and the zoom stay.
  void the_shape_folding_swap_keeps_selection_and_zoom() {
    Fixture f;
    const QString model = QStringLiteral(FX_RESOURCES_DIR "/models/tiny_transformer.onnx");
    int first_nodes = -1;
    std::string picked;
    double zoom = 0;
    connect(&f.window, &MainWindow::graph_shown, this, [&] {
      if (first_nodes >= 0) return;
      const auto* doc = f.window.document();
      first_nodes = int(doc->graph().node_count());
      // The last op drawn as a box of its own: it stays through the folding.
      for (QGraphicsItem* it : f.window.scene()->items())
        if (auto* b = qgraphicsitem_cast<fx::views::BoxItem*>(it);
            b && b->item().kind == fx::drawing::Item::Node && doc->is_model_node(b->item().id) &&
            doc->graph().node(b->item().id).op_type == "MatMul") {
          picked = doc->graph().node(b->item().id).name;
          b->setSelected(true);  // as a click does: the inspector follows
          break;
        }
      f.window.view()->zoom_by(1.7);
      zoom = f.window.view()->zoom();
    });
    QVERIFY(f.open(model));
    QVERIFY(!picked.empty());
    const auto* doc = f.window.document();
    QVERIFY(doc->shapes_folded);
    QVERIFY2(
        int(doc->graph().node_count()) < first_nodes,
        qPrintable(QStringLiteral("%1 -> %2").arg(first_nodes).arg(doc->graph().node_count())));
    const auto selected = f.window.scene()->selectedItems();
    QCOMPARE(selected.size(), qsizetype(1));
    auto* box = qgraphicsitem_cast<fx::views::BoxItem*>(selected.front());
    QVERIFY(box);
    QCOMPARE(doc->graph().node(box->item().id).name, picked);
    QCOMPARE(f.window.inspector()->value_of(QStringLiteral("Name")),
             QString::fromStdString(picked));
    QCOMPARE(f.window.view()->zoom(), zoom);
  }

  // Room to work: the geometry and the dock layout the user left are the next window's;
  // a decision keeps the inspector on the group and the panel's buttons where they were.
  void geometry_docks_inspector_and_buttons_stay() {
    {
      Fixture f;
      f.window.resize(1000, 700);
      auto* dims = f.window.findChild<QDockWidget*>(QStringLiteral("DimensionsDock"));
      QVERIFY(dims);
      const bool dims_hidden = !dims->isHidden();  // the other state than the default
      dims->setVisible(!dims_hidden);
      QVERIFY(f.window.close());
      MainWindow again;
      QCOMPARE(again.size(), QSize(1000, 700));
      auto* dims_again = again.findChild<QDockWidget*>(QStringLiteral("DimensionsDock"));
      QCOMPARE(dims_again->isHidden(), dims_hidden);
      dims_again->setVisible(true);  // the next tests start with every dock shown
      again.resize(1200, 800);
      again.close();
    }
    Fixture f;
    QVERIFY(f.open());
    const auto* doc = f.window.document();
    QVERIFY(doc->plan.groups().size() >= 2);
    f.window.select_group(1);
    QCOMPARE(f.window.inspector()->shown_fusion_group(), 1);
    QPushButton* accept = nullptr;
    for (auto* b : f.window.candidate_panel()->findChildren<QPushButton*>())
      if (b->text() == QStringLiteral("&Accept")) accept = b;
    QVERIFY(accept);
    QCoreApplication::processEvents();
    const QPoint at = accept->mapTo(&f.window, QPoint(0, 0));
    const QString summary_before =
        f.window.candidate_panel()->findChild<QLabel*>(QStringLiteral("PlanSummary"))->text();
    f.window.accept_groups({QString::fromStdString(doc->plan.groups()[1].id)});
    QCoreApplication::processEvents();
    QCOMPARE(f.window.inspector()->shown_fusion_group(), 1);  // not back to "Model"
    QVERIFY(f.window.candidate_panel()->findChild<QLabel*>(QStringLiteral("PlanSummary"))->text() !=
            summary_before);
    QCOMPARE(accept->mapTo(&f.window, QPoint(0, 0)), at);
  }

  // Every "Menu > Item" the window's text or the user guide names is a real menu path.
  void every_menu_path_the_ui_names_exists() {
    Fixture f;
    const QStringList paths = fx::views::menu_paths(f.window.menuBar());
    QVERIFY(paths.contains(QStringLiteral("Help > User Guide")));
    QVERIFY(paths.contains(QStringLiteral("Help > Keyboard Shortcuts")));
    QVERIFY(paths.contains(QStringLiteral("Tools > Reject Groups That Measured Slower")));
    const auto exists = [&](const QString& named) {
      for (const QString& p : paths)
        if (p == named || named.startsWith(p + QLatin1Char(' ')) ||
            p.startsWith(named + QStringLiteral(" > ")))
          return true;
      return false;
    };
    QStringList files;
    QDirIterator it(QStringLiteral(FX_SOURCE_DIR "/views"), {QStringLiteral("*.cc")});
    while (it.hasNext()) files << it.next();
    files << QStringLiteral(FX_SOURCE_DIR "/docs/user-guide.md");
    const QRegularExpression named(
        QStringLiteral("\\b(?:File|Edit|View|Tools|Help) > [^\"*()<>.,;\\\\]+"
                       "(?: > [^\"*()<>.,;\\\\]+)*"));
    int checked = 0;
    for (const QString& path : files) {
      QFile file(path);
      QVERIFY(file.open(QIODevice::ReadOnly));
      // Markdown wraps lines inside a path; code splits strings: join both.
      QString text = QString::fromUtf8(file.readAll());
      text.replace(QRegularExpression(QStringLiteral("\"\\s*\n\\s*\"")), QString());
      text.replace(QLatin1Char('\n'), QLatin1Char(' '));
      for (auto m = named.globalMatch(text); m.hasNext();) {
        const QString found = m.next().captured().simplified();
        ++checked;
        QVERIFY2(exists(found), qPrintable(path + QStringLiteral(": no menu path ") + found));
      }
    }
    QVERIFY(checked >= 10);
    // The shortcut list is read from the same menus.
    QVERIFY(fx::views::shortcut_lines(f.window.menuBar())
                .join(QLatin1Char('\n'))
                .contains(QStringLiteral("File > Open Model")));
    QVERIFY(!fx::views::user_guide_path().isEmpty());
  }

  // Terms have tooltips and a short glossary: Help > Glossary and the user guide's
  // Glossary define the same terms (anchor and opaque among them), and every column of
  // the candidate table says what it holds.
  void every_term_is_explained() {
    QFile guide(QStringLiteral(FX_SOURCE_DIR "/docs/user-guide.md"));
    QVERIFY(guide.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(guide.readAll());
    const qsizetype section = text.indexOf(QStringLiteral("## Glossary"));
    QVERIFY(section >= 0);
    const QString guide_glossary = text.mid(section);
    QStringList terms;
    for (const auto& [term, definition] : fx::views::glossary()) {
      terms << term.toLower();
      QVERIFY(!definition.isEmpty());
      QVERIFY2(guide_glossary.contains(QStringLiteral("**%1**").arg(term)),
               qPrintable(term + QStringLiteral(" is not in the user guide's glossary")));
    }
    QVERIFY(terms.contains(QStringLiteral("anchor")));
    QVERIFY(terms.contains(QStringLiteral("opaque")));
    QVERIFY(terms.contains(QStringLiteral("kernel")));
    QVERIFY(!fx::views::glossary_tip(QStringLiteral("ANCHOR")).isEmpty());
    Fixture f;
    QVERIFY(f.open());
    auto* model = f.window.candidate_model();
    for (int c = 0; c < model->columnCount(); ++c)
      QVERIFY2(!model->headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty(),
               qPrintable(model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString()));
  }

  // Errors: one plain sentence in the status bar; command lines and paths are details.
  void errors_show_one_sentence_and_keep_details_behind() {
    Fixture f;
    const QString raw = QStringLiteral(
        "The profiler failed (exit code 2).\n\n/usr/bin/fxc profile /tmp/fx-XYZ/model.onnx "
        "--plan /tmp/fx-XYZ/plan.json\n\nerror: something deep");
    QCOMPARE(fx::views::error_headline(raw), QStringLiteral("The profiler failed (exit code 2)."));
    f.window.show_error(QStringLiteral("Profiling failed"), raw);
    const QString shown = f.window.statusBar()->currentMessage();
    QCOMPARE(shown, QStringLiteral("The profiler failed (exit code 2)."));
    QVERIFY(!shown.contains(QStringLiteral("/tmp")));
    QCOMPARE(f.window.last_error(), raw);  // the details are kept
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
