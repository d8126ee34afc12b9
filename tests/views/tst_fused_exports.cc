// SPDX-License-Identifier: Apache-2.0
// Side-by-side fused graph (selection synchronised both ways), the Generate dock and
// every export of the File > Export menu, offscreen on the sample model.
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProcess>
#include <QTemporaryDir>
#include <QToolBar>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "before_after_json.h"

#include "analysis/fused_graph.h"
#include "onnx/model_loader.h"
#include "profile/chrome_trace.h"
#include "profile/timeline.h"
#include "report/report_text.h"
#include "views/code_view.h"
#include "views/fused_graph_pane.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/main_window.h"
#include "views/timeline_view.h"

using fx::views::MainWindow;

namespace {

const QString kModel = QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx");

struct Fixture {
  QTemporaryDir dir;
  MainWindow window;
  Fixture() {
    fx::views::AnalysisSettings s;
    s.device = QStringLiteral("nvidia-h100");
    window.set_analysis_settings(s);
    window.set_autosave_dir(dir.path());
    window.resize(1400, 800);
    window.show();
  }
  bool open() {
    QSignalSpy opened(&window, &MainWindow::model_opened);
    window.open_model(kModel);
    return opened.wait(20000) || opened.count() > 0;
  }
  // Accepts every group; returns the index of a group with at least two members.
  int accept_all() {
    const auto& groups = window.document()->plan.groups();
    QStringList ids;
    int multi = -1;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      ids << QString::fromStdString(groups[i].id);
      if (multi < 0 && groups[i].nodes.size() >= 2) multi = int(i);
    }
    window.accept_groups(ids);
    return multi;
  }
  bool export_and_wait(const std::function<bool()>& start) {
    QSignalSpy done(&window, &MainWindow::export_finished);
    if (!start()) return false;
    if (!done.wait(60000) && done.isEmpty()) return false;
    return done.front().at(0).toBool();
  }
  QByteArray read(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
  }
};

// The row of `group` in the report's HTML groups table (one line per row).
QByteArray html_group_row(const QByteArray& html, const QByteArray& group) {
  const QByteArray cell = QByteArray(group).append("</td>");
  for (const QByteArray& line : html.split('\n'))
    if (line.startsWith("<tr><td>") && line.contains(cell)) return line;
  return {};
}

}  // namespace

class TestFusedExports : public QObject {
  Q_OBJECT
 private slots:
  void side_by_side_selection_sync() {
    Fixture f;
    QVERIFY(f.open());
    const int pg = f.accept_all();
    QVERIFY(pg >= 0);
    auto* pane = f.window.fused_pane();
    QSignalSpy shown(pane, &fx::views::FusedGraphPane::shown);
    f.window.set_side_by_side(true);
    QVERIFY(f.window.side_by_side());
    QVERIFY(shown.wait(20000));
    QTRY_VERIFY_WITH_TIMEOUT(!pane->is_busy(), 20000);
    const fx::FusedGraph* fused = pane->fused();
    QVERIFY(fused);
    const auto& doc = *f.window.document();
    const auto& group = doc.plan.groups()[std::size_t(pg)];
    // Fewer nodes: each accepted group became one kernel.
    QVERIFY(fused->graph.node_count() < doc.graph().node_count());
    const fx::NodeId kernel = pane->kernel_of_plan_group(pg);
    QVERIFY(kernel != fx::kNoNode);
    QCOMPARE(fused->originals[std::size_t(kernel)].size(), group.nodes.size());

    // Fused -> original: clicking the kernel highlights the nodes it replaced.
    fx::views::BoxItem* kbox = pane->scene()->box_of_node(kernel);
    QVERIFY(kbox);
    kbox->setSelected(true);
    for (const std::string& name : group.nodes) {
      auto* box = f.window.scene()->box_of_node(doc.graph().find_node(name));
      QVERIFY(box);
      QVERIFY2(box->highlighted(), name.c_str());
    }
    kbox->setSelected(false);

    // Original -> fused: selecting a member selects its kernel.
    pane->scene()->clearSelection();
    const fx::NodeId member = doc.graph().find_node(group.nodes.back());
    auto* mbox = f.window.scene()->box_of_node(member);
    QVERIFY(mbox);
    f.window.scene()->clearSelection();
    mbox->setSelected(true);
    QTRY_VERIFY(pane->scene()->box_of_node(kernel)->isSelected());
    QCOMPARE(pane->fused_node_of(member), kernel);

    // Rejecting the group rebuilds the fused graph without that kernel.
    f.window.reject_groups({QString::fromStdString(group.id)});
    QVERIFY(shown.wait(20000));
    QCOMPARE(pane->kernel_of_plan_group(pg), fx::kNoNode);
    QVERIFY(pane->fused_node_of(member) != fx::kNoNode);
    QCOMPARE(pane->fused()->graph.node(pane->fused_node_of(member)).name, group.nodes.back());
  }

  void side_by_side_navigation_follows() {
    Fixture f;
    QVERIFY(f.open());
    QVERIFY(f.accept_all() >= 0);
    auto* pane = f.window.fused_pane();
    QSignalSpy shown(pane, &fx::views::FusedGraphPane::shown);
    f.window.set_side_by_side(true);
    QVERIFY(shown.wait(20000));
    QTRY_VERIFY_WITH_TIMEOUT(!pane->is_busy(), 20000);
    QVERIFY(f.window.navigation_linked());
    const auto& doc = *f.window.document();
    fx::views::GraphView* original = f.window.view();
    fx::views::GraphView* fused = pane->view();
    const auto* oscene = f.window.scene();
    const auto* fscene = pane->scene();

    // A kernel in the middle of the fused graph (its view can centre on it) and one
    // of the nodes it replaced.
    const auto& groups = doc.plan.groups();
    fx::NodeId kernel = fx::kNoNode, member = fx::kNoNode;
    double best = 1e9;
    const double middle = fscene->sceneRect().center().y();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const fx::NodeId k = pane->kernel_of_plan_group(int(i));
      if (k == fx::kNoNode || groups[i].nodes.size() < 2) continue;
      const double d = std::abs(fscene->node_rect(k).center().y() - middle);
      if (d < best) {
        best = d;
        kernel = k;
        member = doc.graph().find_node(groups[i].nodes[1]);
      }
    }
    QVERIFY(kernel != fx::kNoNode && member != fx::kNoNode);
    QCOMPARE(pane->fused_node_of(member), kernel);

    // Original leads: zoom in and centre on the member; the fused view follows to the
    // kernel, at the same zoom and the same place on screen.
    original->zoom_reset();
    original->zoom_by(2.0);
    const QRectF mrect = oscene->node_rect(member);
    QVERIFY(!mrect.isEmpty());
    original->centerOn(mrect.center());
    QCOMPARE(fused->zoom(), original->zoom());
    const QRectF krect = fscene->node_rect(kernel);
    QVERIFY(!krect.isEmpty());
    // The kernel is on screen where the nodes it replaced are in the original view (the
    // lead is the box nearest the centre: the member, or a neighbour when the view could
    // not centre the member exactly).
    QRectF members;
    for (const std::string& name : groups[std::size_t(pane->plan_group_of(kernel))].nodes)
      members |= QRectF(
          original->mapFromScene(oscene->node_rect(doc.graph().find_node(name))).boundingRect());
    // Positions relative to each view's centre (the fused pane has a caption above).
    const QPoint shift = fused->viewport()->rect().center() - original->viewport()->rect().center();
    const QPoint at_fused = fused->mapFromScene(krect.center()) - shift;
    QVERIFY2(
        members.adjusted(-4, -4, 4, 4).contains(at_fused),
        qPrintable(QStringLiteral("members at %1,%2 %3x%4 in the original view, kernel at %5,%6")
                       .arg(members.x())
                       .arg(members.y())
                       .arg(members.width())
                       .arg(members.height())
                       .arg(at_fused.x())
                       .arg(at_fused.y())));

    // Fused leads: centring another node there (one the view can centre exactly)
    // brings the original view to the node it stands for.
    fused->zoom_by(1.2);
    QCOMPARE(original->zoom(), fused->zoom());
    const QPoint fcentre = fused->viewport()->rect().center();
    fx::NodeId other = fx::kNoNode;
    for (fx::NodeId n = 0; std::size_t(n) < pane->fused()->graph.node_count(); ++n) {
      if (n == kernel || pane->originals_of(n).size() != 1) continue;
      const QPointF c = fscene->node_rect(n).center();
      if (std::abs(c.y() - krect.center().y()) < 100) continue;
      fused->centerOn(c);
      // Vertically: the graphs are narrower than the views, which cannot centre across.
      if (std::abs(fused->mapFromScene(c).y() - fcentre.y()) <= 2) {
        other = n;
        break;
      }
    }
    QVERIFY(other != fx::kNoNode);
    const QPoint o1 = fused->mapFromScene(fscene->node_rect(other).center());
    const QPoint o2 =
        original->mapFromScene(oscene->node_rect(pane->originals_of(other).front()).center());
    QVERIFY2(
        std::abs((o1.y() - shift.y()) - o2.y()) <= 3,
        qPrintable(
            QStringLiteral("fused node at y %1, its original at y %2").arg(o1.y()).arg(o2.y())));

    // Unlinked (the View menu's toggle): each view moves on its own.
    QAction* link = nullptr;
    for (QAction* a : f.window.findChildren<QAction*>())
      if (a->objectName() == QLatin1String("LinkNavigationAction")) link = a;
    QVERIFY(link && link->isChecked());
    // The toggle is one click away, on the toolbar beside Side by Side.
    bool on_toolbar = false;
    for (QToolBar* bar : f.window.findChildren<QToolBar*>())
      on_toolbar = on_toolbar || bar->actions().contains(link);
    QVERIFY(on_toolbar);
    // Both panes say what they show.
    auto* caption = f.window.findChild<QLabel*>(QStringLiteral("OriginalCaption"));
    QVERIFY(caption && caption->isVisible());
    QVERIFY2(caption->text().contains(QString::number(doc.graph().node_count())),
             qPrintable(caption->text()));
    link->trigger();
    QVERIFY(!f.window.navigation_linked());
    const QTransform fused_before = fused->transform();
    const QPointF fused_centre = fused->mapToScene(fused->viewport()->rect().center());
    original->zoom_by(1.5);
    original->centerOn(mrect.center());
    QCOMPARE(fused->transform(), fused_before);
    QCOMPARE(fused->mapToScene(fused->viewport()->rect().center()), fused_centre);
  }

  void generate_shows_the_groups_source() {
    Fixture f;
    QVERIFY(f.open());
    const int pg = f.accept_all();
    QVERIFY(pg >= 0);
    auto* code = f.window.code_dock();
    QSignalSpy generated(code, &fx::views::CodeDock::generated);
    f.window.generate(pg);
    QVERIFY(generated.wait(20000));
    const QString src = code->source();
    const auto& group = f.window.document()->plan.groups()[std::size_t(pg)];
    QCOMPARE(code->group_id(), QString::fromStdString(group.id));
    for (const std::string& name : group.nodes)
      QVERIFY2(src.contains(QString::fromStdString(name)), name.c_str());
    QVERIFY(code->editor()->isReadOnly());
    // Highlighted: comment lines carry an italic format.
    const auto formats = code->editor()->document()->firstBlock().layout()->formats();
    QVERIFY(!formats.isEmpty());
    QVERIFY(formats.front().format.fontItalic());
  }

  void exports_write_files() {
    Fixture f;
    QVERIFY(f.open());
    f.accept_all();
    const QString onnx = f.dir.filePath(QStringLiteral("fused.onnx"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_fused_model(onnx); }));
    const fx::LoadedModel back = fx::load_onnx(onnx.toStdString());
    QVERIFY(back.graph.node_count() > 0);

    const QString kernels = f.dir.filePath(QStringLiteral("kernels"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_kernels(kernels); }));
    QVERIFY(QFile::exists(kernels + QStringLiteral("/manifest.json")));

    const QString html = f.dir.filePath(QStringLiteral("report.html"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(html); }));
    QFile h(html);
    QVERIFY(h.open(QIODevice::ReadOnly));
    QVERIFY(h.readAll().contains("tiny_cnn"));

    const QString pdf = f.dir.filePath(QStringLiteral("report.pdf"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(pdf); }));
    QFile p(pdf);
    QVERIFY(p.open(QIODevice::ReadOnly));
    QVERIFY(p.read(4) == "%PDF");

    const QString md = f.dir.filePath(QStringLiteral("report.md"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(md); }));
    QVERIFY(QFile(md).size() > 0);

    // Traces need a timeline: refused (with a message naming the file) until one exists.
    const QString trace = f.dir.filePath(QStringLiteral("trace.json"));
    QVERIFY(!f.window.export_traces(trace));
    QVERIFY(f.window.last_error().contains(trace));
    fx::Timeline t;
    fx::KernelEvent e;
    e.name = "conv";
    e.start_us = 0;
    e.duration_us = 10;
    t.events.push_back(e);
    f.window.timeline()->set_lane(QStringLiteral("before"), t);
    QVERIFY(f.export_and_wait([&] { return f.window.export_traces(trace); }));
    QVERIFY(fx::read_trace(trace.toStdString()).events.size() == 1);

    // A file that cannot be written: an error naming it, no crash.
    const QString bad = QStringLiteral("/nonexistent-dir/x/report.html");
    QVERIFY(!f.export_and_wait([&] { return f.window.export_report(bad); }));
    QVERIFY(f.window.last_error().contains(QStringLiteral("/nonexistent-dir/x")));
  }

  // A before/after result loaded in the window goes into the exported report as with
  // `fxc report --profile`: the measured speed-up and the fused group's measured saving.
  void report_includes_the_loaded_before_after_result() {
    Fixture f;
    QVERIFY(f.open());
    f.accept_all();
    const fx::testing::BeforeAfterFixture ba;
    const std::string speedup = fx::format_number(ba.speedup(), 3) + "&times;";
    const std::string saved = fx::human_us(ba.fused_saved_us());

    // No result yet: no measurements.
    const QString plain = f.dir.filePath(QStringLiteral("plain.html"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(plain); }));
    const QByteArray without = f.read(plain);
    QVERIFY(without.contains("tiny_cnn"));
    QVERIFY(!without.contains(speedup.c_str()));
    QVERIFY(!html_group_row(without, "fg-142d3ebd").isEmpty());
    QVERIFY(!html_group_row(without, "fg-142d3ebd").contains(saved.c_str()));

    const QString result = f.dir.filePath(QStringLiteral("before_after.json"));
    {
      QFile out(result);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(QByteArray::fromStdString(ba.json().dump()));
    }
    QVERIFY2(f.window.load_profile_result(result), qPrintable(f.window.last_error()));

    const QString html = f.dir.filePath(QStringLiteral("report.html"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(html); }));
    const QByteArray with = f.read(html);
    QVERIFY2(with.contains(speedup.c_str()), speedup.c_str());
    const QByteArray row = html_group_row(with, "fg-142d3ebd");
    QVERIFY2(row.contains(("<td class=\"n\">" + saved + "</td>").c_str()), row.constData());
    QVERIFY(row.contains("onednn-postops"));
    // The excluded group is reported with the profiler's reason.
    QVERIFY(html_group_row(with, "fg-1c9df8f9").contains("breaks equivalence"));
    // The reproduce commands name the result file, like `fxc report --profile`.
    QVERIFY(with.contains(("--profile " + result.toStdString()).c_str()));

    // JSON: the same numbers, exactly.
    const QString js = f.dir.filePath(QStringLiteral("report.json"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(js); }));
    const auto j = nlohmann::json::parse(f.read(js).toStdString());
    QCOMPARE(j.at("inputs").at("profile").get<std::string>(), result.toStdString());
    QVERIFY(qFuzzyCompare(j.at("measurements").at("speedup").get<double>(), ba.speedup()));
    bool found = false;
    for (const auto& g : j.at("groups"))
      if (g.at("id") == "fg-142d3ebd") {
        found = true;
        QVERIFY(qFuzzyCompare(g.at("measured").at("measured_saved_us").get<double>(),
                              ba.fused_saved_us()));
      }
    QVERIFY(found);

#ifdef FX_FXC_PATH
    // The same inputs through `fxc report --profile`, with no pass option: the plan's
    // disabled_passes make fxc read the model as the window did (BN folded in both): the
    // same measurements and groups.
    const QString plan = f.dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(f.window.save_plan(plan));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(js); }));
    const auto gui = nlohmann::json::parse(f.read(js).toStdString());
    const QString cli_out = f.dir.filePath(QStringLiteral("cli.json"));
    QProcess fxc;
    fxc.start(QStringLiteral(FX_FXC_PATH),
              {QStringLiteral("report"), kModel, QStringLiteral("--plan"), plan,
               QStringLiteral("--profile"), result, QStringLiteral("--device"),
               QStringLiteral("nvidia-h100"), QStringLiteral("--out"), cli_out});
    QVERIFY(fxc.waitForFinished(60000));
    QVERIFY2(fxc.exitCode() == 0, fxc.readAllStandardError().constData());
    const auto cli = nlohmann::json::parse(f.read(cli_out).toStdString());
    QCOMPARE(gui.at("measurements").dump(), cli.at("measurements").dump());
    QCOMPARE(gui.at("groups").dump(), cli.at("groups").dump());
    QCOMPARE(gui.at("inputs").at("profile"), cli.at("inputs").at("profile"));
#endif

    // PDF still written with the measurements in it.
    const QString pdf = f.dir.filePath(QStringLiteral("report.pdf"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(pdf); }));
    QVERIFY(f.read(pdf).startsWith("%PDF"));

    // Opening a model (here the same file again) drops the result measured before it:
    // its report carries no measurements and the timeline is empty.
    QVERIFY(f.window.save_plan(f.dir.filePath(QStringLiteral("kept.json"))));
    QVERIFY(f.open());
    const QString reopened = f.dir.filePath(QStringLiteral("reopened.html"));
    QVERIFY(f.export_and_wait([&] { return f.window.export_report(reopened); }));
    QVERIFY(!f.read(reopened).contains(speedup.c_str()));
    QVERIFY(!f.read(reopened).contains(("--profile " + result.toStdString()).c_str()));
  }
};

QTEST_MAIN(TestFusedExports)
#include "tst_fused_exports.moc"
