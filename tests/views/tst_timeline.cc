// The timeline: axis maths, lanes and hit testing, and profiling through a stubbed
// child process (success fills the timeline; an error or a crash is reported and the
// window lives on).
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "views/main_window.h"
#include "views/time_axis.h"
#include "views/timeline_view.h"

using namespace fx;
using namespace fx::views;

namespace {

Timeline make_timeline(const std::vector<std::pair<std::string, double>>& kernels) {
  Timeline t;
  double at = 0;
  for (const auto& [name, dur] : kernels) {
    KernelEvent e;
    e.name = name;
    e.nodes = {name};
    e.op_types = {name};
    e.start_us = at;
    e.duration_us = dur;
    e.bytes_read = 1000;
    t.events.push_back(e);
    at += dur + 1;
  }
  return t;
}

QString write_stub(const QTemporaryDir& dir, const QString& name, const QByteArray& body) {
  const QString path = dir.filePath(name);
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write("#!/bin/sh\n" + body);
  f.close();
  f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
  return path;
}

}  // namespace

class TestTimeline : public QObject {
  Q_OBJECT
 private slots:
  void axis_maps_zooms_and_pans() {
    TimeAxis a;
    a.width_px = 1000;
    a.fit(100);
    QVERIFY(a.start_us < 0 && a.end_us > 100);
    QCOMPARE(a.to_us(a.to_x(42.0)), 42.0);
    const double before = a.to_us(300);
    a.zoom(4, 300);
    QVERIFY(std::abs(a.to_us(300) - before) < 1e-9);  // the time under the cursor stays
    QVERIFY(std::abs((a.end_us - a.start_us) - 102.0 / 4) < 1e-9);
    const double t = a.to_us(500);
    a.pan(100);  // drag right by 100 px: what was at 500 px is now at 600 px
    QVERIFY(std::abs(a.to_x(t) - 600) < 1e-9);
    const auto ticks = a.ticks(8);
    QVERIFY(ticks.size() >= 4 && ticks.size() <= 16);
    const double step = ticks[1] - ticks[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
    QVERIFY(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 ||
            std::abs(mantissa - 5) < 1e-6);
    for (double x : ticks) QVERIFY(x >= a.start_us && x <= a.end_us + 1e-9);
  }

  void lanes_hit_testing_and_summary() {
    TimelineView view;
    view.resize(800, 200);
    const Timeline before = make_timeline({{"conv", 40}, {"bn", 20}, {"relu", 10}});
    const Timeline after = make_timeline({{"conv_bn_relu", 35}});
    view.set_lane(QStringLiteral("before"), before);
    view.set_lane(QStringLiteral("after"), after);
    QCOMPARE(view.lane_count(), 2);
    const auto& a = view.axis();
    // The middle of "bn" (starts at 41 µs, lasts 20) in lane 0.
    const int x = 110 + int(a.to_x(51));
    const KernelEvent* hit = view.event_at(QPoint(x, view.lane_top(0) + 5));
    QVERIFY(hit);
    QCOMPARE(hit->name, std::string("bn"));
    QVERIFY(view.event_at(QPoint(x, view.lane_top(1) + 5)) == nullptr);  // after: 0-35 µs only
    const KernelEvent* fused = view.event_at(QPoint(110 + int(a.to_x(20)), view.lane_top(1) + 5));
    QVERIFY(fused);
    QCOMPARE(fused->name, std::string("conv_bn_relu"));
    QVERIFY(view.event_at(QPoint(110 + int(a.to_x(80)), view.lane_top(1) + 5)) == nullptr);
    const double speedup = before.kernel_time_us(0) / after.kernel_time_us(0);
    QVERIFY(view.summary().contains(QString::number(speedup, 'f', 2)));
    QSignalSpy clicked(&view, &TimelineView::kernel_clicked);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(x, view.lane_top(0) + 5));
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toStringList(), QStringList{QStringLiteral("bn")});
  }

  void profile_in_a_stubbed_child_process() {
    QTemporaryDir dir;
    MainWindow w;
    AnalysisSettings s;
    s.device = QStringLiteral("nvidia-h100");
    w.set_analysis_settings(s);
    w.set_autosave_dir(dir.path());
    w.show();
    QSignalSpy opened(&w, &MainWindow::model_opened);
    w.open_model(QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx"));
    QVERIFY(opened.wait(20000));
    QSignalSpy done(&w, &MainWindow::profile_finished);
    QSignalSpy failed(&w, &MainWindow::failed);

    // Success: the stub writes a Chrome trace where --trace says.
    w.set_profiler(
        write_stub(dir, QStringLiteral("ok.sh"),
                   "while [ \"$1\" != --trace ]; do shift; done\n"
                   "cat > \"$2\" <<'JSON'\n"
                   "{\"traceEvents\": [\n"
                   " {\"ph\": \"X\", \"name\": \"/conv1/Conv\", \"ts\": 0, \"dur\": 30, \"pid\": "
                   "1, \"tid\": 1,\n"
                   "  \"args\": {\"nodes\": [\"/conv1/Conv\"], \"op_types\": [\"Conv\"]}},\n"
                   " {\"ph\": \"X\", \"name\": \"/relu/Relu\", \"ts\": 31, \"dur\": 5, \"pid\": 1, "
                   "\"tid\": 1,\n"
                   "  \"args\": {\"nodes\": [\"/relu/Relu\"], \"op_types\": [\"Relu\"]}}]}\n"
                   "JSON\n"));
    w.profile();
    QVERIFY(done.wait(20000));
    QCOMPARE(done.front().front().toBool(), true);
    QCOMPARE(w.timeline()->lane_count(), 1);
    QCOMPARE(int(w.timeline()->lane(0).events.size()), 2);

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
    QVERIFY(w.document() != nullptr);
    QCOMPARE(w.timeline()->lane_count(), 1);  // the earlier measurement is kept
  }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
