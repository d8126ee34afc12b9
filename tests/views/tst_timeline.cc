// SPDX-License-Identifier: Apache-2.0
// The timeline: axis maths, lanes and hit testing, pan/zoom, range selection and the
// hover text (bytes, achieved GB/s, group).
#include <QApplication>
#include <QtTest>

#include <cmath>
#include <set>

#include "views/op_style.h"
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
    // Each lane's kernel time and count, and no second speed-up (the profile pane has
    // the one measured figure).
    QVERIFY(view.summary().contains(QStringLiteral("in 3 kernels")));
    QVERIFY(view.summary().contains(QStringLiteral("in 1 kernel")));
    QVERIFY(!view.summary().contains(QStringLiteral("×")));
    QSignalSpy clicked(&view, &TimelineView::kernel_clicked);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(x, view.lane_top(0) + 5));
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toStringList(), QStringList{QStringLiteral("bn")});
  }

  void range_selection_reports_duration_and_lane_time() {
    TimelineView view;
    view.resize(800, 200);
    view.set_lane(QStringLiteral("before"),
                  make_timeline({{"conv", 40}, {"bn", 20}, {"relu", 10}}));
    view.set_lane(QStringLiteral("after"), make_timeline({{"conv_bn_relu", 35}}));
    QSignalSpy changed(&view, &TimelineView::range_changed);
    const auto x_of = [&](double us) {
      return view.label_width() + int(std::lround(view.axis().to_x(us)));
    };
    // Shift+drag from 10 µs to 50 µs over the lanes.
    const int y = view.lane_top(0) + 5;
    QTest::mousePress(&view, Qt::LeftButton, Qt::ShiftModifier, QPoint(x_of(10), y));
    QMouseEvent move(QEvent::MouseMove, QPointF(x_of(50), y),
                     view.mapToGlobal(QPointF(x_of(50), y)), Qt::NoButton, Qt::LeftButton,
                     Qt::ShiftModifier);
    QApplication::sendEvent(&view, &move);
    QTest::mouseRelease(&view, Qt::LeftButton, Qt::ShiftModifier, QPoint(x_of(50), y));
    QVERIFY(changed.count() >= 1);
    const auto r = view.range();
    QVERIFY(r.has_value());
    const double px = (view.axis().end_us - view.axis().start_us) / view.axis().width_px;
    QVERIFY(std::abs(r->first - 10) <= px && std::abs(r->second - 50) <= px);
    // Before: conv 10..40 (30 µs) + bn 41..50 (9 µs); after: conv_bn_relu 10..35 (25 µs).
    view.set_range(10, 50);
    const QString text = view.range_text();
    QVERIFY2(text.contains(format_seconds(40e-6)), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("before ") + format_seconds(39e-6) +
                           QStringLiteral(" in 2 kernels")),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("after ") + format_seconds(25e-6) +
                           QStringLiteral(" in 1 kernels")),
             qPrintable(text));
    // A plain click drops it; Esc too.
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(x_of(5), y));
    QVERIFY(!view.range());
    view.set_range(1, 2);
    QTest::keyClick(&view, Qt::Key_Escape);
    QVERIFY(!view.range());
  }

  void drag_pans_and_wheel_zooms() {
    TimelineView view;
    view.resize(800, 200);
    view.set_lane(QStringLiteral("before"), make_timeline({{"conv", 40}, {"bn", 20}}));
    const double start = view.axis().start_us, span = view.axis().end_us - start;
    const int y = view.lane_top(0) + 5;
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(400, y));
    QMouseEvent move(QEvent::MouseMove, QPointF(300, y), view.mapToGlobal(QPointF(300, y)),
                     Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&view, &move);
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(300, y));
    QVERIFY(!view.range());  // a drag without shift pans, it does not select
    QVERIFY(std::abs(view.axis().start_us - (start + 100 * span / view.axis().width_px)) < 1e-6);
    QWheelEvent wheel(QPointF(400, y), view.mapToGlobal(QPointF(400, y)), {}, QPoint(0, 240),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &wheel);
    QVERIFY(std::abs((view.axis().end_us - view.axis().start_us) - span / 1.5625) < 1e-6);
  }

  void tooltip_gives_bytes_bandwidth_and_group() {
    TimelineView view;
    Timeline t = make_timeline({{"fused", 10}});
    t.events[0].bytes_read = 30000;
    t.events[0].bytes_written = 20000;
    t.events[0].group_id = 1;
    view.set_group_names({QStringLiteral("fg-a (x)"), QStringLiteral("fg-b (conv_bn_act)")});
    view.set_lane(QStringLiteral("after"), t);
    const QString tip = view.tooltip_text(view.lane(0).events[0]);
    // 50,000 bytes in 10 µs = 5 GB/s.
    QVERIFY2(tip.contains(QStringLiteral("5.00 GB/s")), qPrintable(tip));
    QVERIFY(tip.contains(format_bytes(50000)));
    QVERIFY(tip.contains(QStringLiteral("fg-b (conv_bn_act)")));
    QVERIFY(tip.contains(format_seconds(10e-6)));
    QCOMPARE(group_color(1), group_color(1));
    QVERIFY(group_color(0) != group_color(1));
  }

  // Flow arrows: each before kernel that became part of a fused after kernel is linked
  // to it, from the bottom of its bar to the top of the fused bar; unchanged kernels
  // are not linked; one lane alone has no flows.
  void flows_link_before_kernels_to_the_fused_kernel() {
    TimelineView v;
    v.resize(900, 260);
    v.set_lane(QStringLiteral("before"),
               make_timeline({{"conv", 30}, {"bn", 10}, {"relu", 10}, {"pool", 20}}));
    QVERIFY(v.flows().empty());
    Timeline after = make_timeline({{"conv+bn+relu", 35}, {"pool", 20}});
    after.events[0].nodes = {"conv", "bn", "relu"};
    after.events[0].group_id = 0;
    v.set_lane(QStringLiteral("after"), after);
    std::set<std::pair<std::size_t, std::size_t>> got;
    for (const KernelFlow& f : v.flows()) got.insert({f.before, f.after});
    const std::set<std::pair<std::size_t, std::size_t>> want = {{0, 0}, {1, 0}, {2, 0}};
    QCOMPARE(got, want);
    // The lanes leave room for the arrows, which start on the before bar and end on the
    // fused one.
    QVERIFY(v.lane_top(1) - (v.lane_top(0) + 34) >= 20);
    for (const KernelFlow& f : v.flows()) {
      const QLineF line = v.flow_line(f);
      const QPoint on_before = QPointF(line.p1().x(), line.p1().y() - 2).toPoint();
      const QPoint on_after = QPointF(line.p2().x(), line.p2().y() + 2).toPoint();
      QCOMPARE(v.event_at(on_before), &v.lane(0).events[f.before]);
      QCOMPARE(v.event_at(on_after), &v.lane(1).events[0]);
    }
    v.clear();
    QVERIFY(v.flows().empty());
  }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
