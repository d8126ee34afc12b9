// SPDX-License-Identifier: Apache-2.0
// Profiling through a child process: progress lines, success, crash, non-zero exit,
// timeout and cancel (ProfileRunner), and the main window's flow with a stub fxc that
// prints a before/after fixture (lanes and summary filled; a crash, a compile error or
// bad JSON reported while the window lives on; Cancel), then the real fxc on tiny_cnn.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "analysis/plan_totals.h"
#include "before_after_json.h"
#include "views/graph_scene.h"
#include "views/group_result_model.h"
#include "views/main_window.h"
#include "views/profile_runner.h"
#include "views/profile_summary.h"
#include "views/timeline_view.h"

using namespace fx;
using namespace fx::views;
using fx::testing::BeforeAfterFixture;

namespace {

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& body,
                   bool executable = false) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  f.write(body);
  f.close();
  if (executable) f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
  return path;
}

QString write_stub(const QTemporaryDir& dir, const QString& name, const QByteArray& body) {
  return write_file(dir, name, "#!/bin/sh\n" + body, true);
}

// A stub fxc: checks its arguments like the real one, keeps a copy of the plan it was
// given, prints progress to stderr and the fixture to stdout.
QString fixture_stub(const QTemporaryDir& dir) {
  const QString fixture = write_file(dir, QStringLiteral("fixture.json"),
                                     QByteArray::fromStdString(BeforeAfterFixture().json().dump()));
  const QByteArray seen = dir.filePath(QStringLiteral("plan_seen.json")).toUtf8();
  return write_stub(
      dir, QStringLiteral("fxc_ok.sh"),
      "[ \"$1\" = profile ] || exit 9\n"
      "plan=; json=\n"
      "while [ $# -gt 0 ]; do case \"$1\" in\n"
      "  --plan) plan=$2; shift;; --json) json=1;; esac; shift; done\n"
      "[ -n \"$json\" ] && [ -f \"$plan\" ] || { echo 'bad arguments' >&2; exit 2; }\n"
      "cp \"$plan\" '" +
          seen +
          "'\n"
          "echo 'profiling before: run 1/2' >&2\n"
          "echo 'profiling after: run 2/2' >&2\n"
          "cat '" +
          fixture.toUtf8() + "'\n");
}

}  // namespace

class TestProfileFlow : public QObject {
  Q_OBJECT
 private slots:
  void progress_lines() {
    auto p = parse_progress_line(QStringLiteral("  before: run 3/20  "));
    QCOMPARE(p.value, 3);
    QCOMPARE(p.maximum, 20);
    QCOMPARE(p.text, QStringLiteral("before: run 3/20"));
    p = parse_progress_line(QStringLiteral("compiling kernels 45%"));
    QCOMPARE(p.value, 45);
    QCOMPARE(p.maximum, 100);
    p = parse_progress_line(QStringLiteral("reading /tmp/a/b.onnx"));
    QCOMPARE(p.maximum, -1);
    p = parse_progress_line(QStringLiteral("date 2026/11/23 run 4/5"));  // 2026/11 is no count
    QCOMPARE(p.value, 4);
    QCOMPARE(p.maximum, 5);
  }

  void runner_reports_success_failure_timeout_and_cancel() {
    QTemporaryDir dir;
    ProfileRunner runner;
    QSignalSpy ok(&runner, &ProfileRunner::succeeded);
    QSignalSpy failed(&runner, &ProfileRunner::failed);
    QSignalSpy progress(&runner, &ProfileRunner::progress);

    runner.start(write_stub(dir, QStringLiteral("a.sh"), "echo 'run 1/4' >&2\necho '{}'\n"), {});
    QVERIFY(ok.wait(10000));
    QCOMPARE(ok.front().front().toByteArray().trimmed(), QByteArray("{}"));
    QTRY_VERIFY(!progress.isEmpty());
    bool saw = false;
    for (const auto& args : progress) saw |= args[0].toInt() == 1 && args[1].toInt() == 4;
    QVERIFY(saw);
    QCOMPARE(failed.count(), 0);

    runner.start(
        write_stub(dir, QStringLiteral("b.sh"), "echo 'kernel.cc:3: error: x' >&2\nexit 3\n"), {});
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.last()[0].toString().contains(QStringLiteral("code 3")));
    QVERIFY(failed.last()[0].toString().contains(QStringLiteral("kernel.cc:3: error: x")));
    QCOMPARE(failed.last()[1].toBool(), false);

    runner.start(write_stub(dir, QStringLiteral("c.sh"), "kill -SEGV $$\n"), {});
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.last()[0].toString().contains(QStringLiteral("crashed")));

    runner.set_timeout_ms(300);
    runner.start(write_stub(dir, QStringLiteral("d.sh"), "exec sleep 30\n"), {});
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.last()[0].toString().contains(QStringLiteral("longer than")));
    QVERIFY(!runner.running());

    runner.set_timeout_ms(0);
    runner.start(write_stub(dir, QStringLiteral("e.sh"), "exec sleep 30\n"), {});
    QTRY_VERIFY(runner.running());
    runner.cancel();
    QVERIFY(failed.wait(10000));
    QCOMPARE(failed.last()[1].toBool(), true);
    QVERIFY(!runner.running());

    runner.start(dir.filePath(QStringLiteral("no-such-program")), {});
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.last()[0].toString().contains(QStringLiteral("cannot start")));
    QCOMPARE(ok.count(), 1);
  }

  void main_window_profiles_through_a_stub() {
    QTemporaryDir dir;
    MainWindow w;
    AnalysisSettings s;
    w.set_analysis_settings(s);
    w.set_autosave_dir(dir.path());
    w.resize(1400, 900);
    w.show();
    QSignalSpy opened(&w, &MainWindow::model_opened);
    w.open_model(QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx"));
    QVERIFY(opened.wait(30000));
    w.accept_groups({QStringLiteral("fg-142d3ebd")});
    QSignalSpy done(&w, &MainWindow::profile_finished);
    QSignalSpy failed(&w, &MainWindow::failed);

    // Success: two lanes, the summary's numbers are the fixture's.
    const BeforeAfterFixture f;
    w.set_profiler(fixture_stub(dir));
    w.profile();
    QVERIFY(done.wait(20000));
    QVERIFY2(done.front().front().toBool(), qPrintable(w.last_error()));
    QCOMPARE(w.timeline()->lane_count(), 2);
    QCOMPARE(int(w.timeline()->lane(0).events.size()), int(f.before.size()));
    QCOMPARE(int(w.timeline()->lane(1).events.size()), int(f.after.size()));
    QCOMPARE(w.timeline()->lane(1).kernel_time_us(0), BeforeAfterFixture::sum_us(f.after));
    ProfileSummary* sum = w.profile_summary();
    QCOMPARE(sum->value(QStringLiteral("speedup")), format_speedup(f.speedup()));
    QVERIFY(sum->value(QStringLiteral("before_ms")).startsWith(format_ms(f.before_ms())));
    QVERIFY(sum->value(QStringLiteral("after_ms")).startsWith(format_ms(f.after_ms())));
    QCOMPARE(sum->value(QStringLiteral("after_kernels")), QString::number(f.after.size()));
    QVERIFY(sum->value(QStringLiteral("excluded")).contains(QStringLiteral("fg-1c9df8f9")));
    QCOMPARE(sum->group_model()->rowCount(), 2);
    // The plan the child got is the window's current plan, with the accepted group.
    QFile seen(dir.filePath(QStringLiteral("plan_seen.json")));
    QVERIFY(seen.open(QIODevice::ReadOnly));
    const auto plan = nlohmann::json::parse(seen.readAll().toStdString());
    bool accepted = false;
    for (const auto& g : plan.at("groups"))
      accepted |= g.value("id", "") == "fg-142d3ebd" && g.value("status", "") == "accepted";
    QVERIFY(accepted);

    // The report exported now carries the measurements, under the file name its
    // reproduce commands write them to.
    {
      QSignalSpy exported(&w, &MainWindow::export_finished);
      const QString report = dir.filePath(QStringLiteral("report.json"));
      QVERIFY(w.export_report(report));
      QVERIFY(exported.wait(30000) || !exported.isEmpty());
      QVERIFY2(exported.front().front().toBool(), qPrintable(w.last_error()));
      QFile rf(report);
      QVERIFY(rf.open(QIODevice::ReadOnly));
      const auto j = nlohmann::json::parse(rf.readAll().toStdString());
      QVERIFY(qFuzzyCompare(j.at("measurements").at("speedup").get<double>(), f.speedup()));
      QCOMPARE(j.at("inputs").at("profile").get<std::string>(), std::string("before_after.json"));
    }

    // Clicking the fused kernel selects its group in the graph.
    TimelineView* tl = w.timeline();
    const QPoint fused(tl->label_width() + int(tl->axis().to_x(20)), tl->lane_top(1) + 5);
    QVERIFY(tl->event_at(fused) && tl->event_at(fused)->name == "fg-142d3ebd");
    QTest::mouseClick(tl, Qt::LeftButton, {}, fused);
    QTRY_VERIFY(!w.scene()->selectedItems().isEmpty());

    // A result loaded from a file; a missing file is an error naming it.
    QVERIFY(w.load_profile_result(dir.filePath(QStringLiteral("fixture.json"))));
    QCOMPARE(w.timeline()->lane_count(), 2);
    QVERIFY(!w.load_profile_result(dir.filePath(QStringLiteral("missing.json"))));
    QVERIFY(w.last_error().contains(QStringLiteral("missing.json")));

    // Bad JSON: reported, the last result stays.
    done.clear();
    w.set_profiler(write_stub(dir, QStringLiteral("garbage.sh"), "echo 'this is not json'\n"));
    w.profile();
    QVERIFY(done.wait(20000));
    QCOMPARE(done.front().front().toBool(), false);
    QVERIFY(failed.last().front().toString().contains(QStringLiteral("not JSON")));
    QCOMPARE(w.timeline()->lane_count(), 2);

    // A compile error in the child: reported with its message.
    done.clear();
    w.set_profiler(write_stub(dir, QStringLiteral("err.sh"),
                              "echo 'kernel.cc:3: error: expected ;' >&2\nexit 3\n"));
    w.profile();
    QVERIFY(done.wait(20000));
    QCOMPARE(done.front().front().toBool(), false);
    QVERIFY(failed.last().front().toString().contains(QStringLiteral("expected ;")));

    // A crash: reported, and the window still works.
    done.clear();
    w.set_profiler(write_stub(dir, QStringLiteral("crash.sh"), "kill -SEGV $$\n"));
    w.profile();
    QVERIFY(done.wait(20000));
    QCOMPARE(done.front().front().toBool(), false);
    QVERIFY(failed.last().front().toString().contains(QStringLiteral("crashed")));
    QVERIFY(w.document() != nullptr);
    QCOMPARE(w.timeline()->lane_count(), 2);

    // Cancel: the child is killed, no error dialog, the window is idle again.
    done.clear();
    const int errors = int(failed.count());
    w.set_profiler(write_stub(dir, QStringLiteral("slow.sh"), "exec sleep 60\n"));
    w.profile();
    QTRY_VERIFY(w.profile_running());
    w.cancel_profile();
    QVERIFY(done.wait(10000));
    QCOMPARE(done.front().front().toBool(), false);
    QVERIFY(!w.profile_running());
    QCOMPARE(int(failed.count()), errors);
  }

  // The real `fxc profile --plan` on tiny_cnn with every candidate accepted.
  void main_window_profiles_tiny_cnn_with_the_real_fxc() {
#ifndef FX_FXC_PATH
    QSKIP("fxc is not built in this configuration");
#else
    QTemporaryDir dir;
    MainWindow w;
    w.set_autosave_dir(dir.path());
    w.resize(1400, 900);
    w.show();
    QSignalSpy opened(&w, &MainWindow::model_opened);
    w.open_model(QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx"));
    QVERIFY(opened.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(!w.is_busy(), 30000);
    QStringList ids;
    for (const auto& g : w.document()->plan.groups()) ids << QString::fromStdString(g.id);
    QVERIFY(!ids.isEmpty());
    w.accept_groups(ids);
    QSignalSpy done(&w, &MainWindow::profile_finished);
    w.set_profiler(QStringLiteral(FX_FXC_PATH));
    w.profile();
    QVERIFY(done.wait(120000));
    QVERIFY2(done.front().front().toBool(), qPrintable(w.last_error()));
    QCOMPARE(w.timeline()->lane_count(), 2);
    const Timeline& before = w.timeline()->lane(0);
    const Timeline& after = w.timeline()->lane(1);
    QCOMPARE(int(before.events.size()), int(w.document()->graph().node_count()));
    // Each accepted group ran as one kernel: fewer kernels after, coloured by group.
    QVERIFY(after.events.size() < before.events.size());
    int grouped = 0;
    for (const KernelEvent& e : after.events)
      grouped += e.group_id.has_value() && e.nodes.size() > 1;
    QVERIFY(grouped >= 1);
    ProfileSummary* sum = w.profile_summary();
    QCOMPARE(sum->group_model()->rowCount(), int(ids.size()));
    QCOMPARE(sum->value(QStringLiteral("before_kernels")), QString::number(before.events.size()));
    QCOMPARE(sum->value(QStringLiteral("after_kernels")), QString::number(after.events.size()));
    QVERIFY(sum->value(QStringLiteral("speedup")).endsWith(QStringLiteral("×")));
    QVERIFY(sum->value(QStringLiteral("outputs_match")).contains(QStringLiteral("match")));
    // One definition of "kernels": what the profile measured is what the status bar
    // counts from the plan (every group accepted here).
    const fx::PlanTotals t = fx::plan_totals(*w.document()->analysis, w.document()->plan);
    QCOMPARE(int(before.events.size()), t.kernels_before);
    QCOMPARE(int(after.events.size()), t.kernels_after);
    const QString stats = w.findChild<QLabel*>(QStringLiteral("StatsLabel"))->text();
    QVERIFY2(stats.contains(
                 QStringLiteral("kernels %1 → %2").arg(t.kernels_before).arg(t.kernels_after)),
             qPrintable(stats));
#endif
  }
};

QTEST_MAIN(TestProfileFlow)
#include "tst_profile_flow.moc"
