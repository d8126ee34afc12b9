// SPDX-License-Identifier: Apache-2.0
// ViewSync without a window: two views of two scenes showing the same model; zooming and
// centring one moves the other to the matching nodes at the same zoom, either way round;
// unlinked, or not ready, nothing follows.
#include <QtTest>

#include <QScrollBar>
#include <QWheelEvent>

#include "document_fixture.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/view_sync.h"

using fx::views::GraphScene;
using fx::views::GraphView;
using fx::views::ViewSync;
namespace t = fx::views::test;

namespace {

std::vector<fx::NodeId> same(fx::NodeId n) {
  return {n};
}

// Where a node's centre is on the view's viewport.
QPoint on_screen(const GraphView& v, const GraphScene& s, fx::NodeId n) {
  return v.mapFromScene(s.node_rect(n).center());
}

}  // namespace

class TestViewSync : public QObject {
  Q_OBJECT
 private slots:
  void maps_a_view_between_two_scenes() {
    auto doc = t::analysed_document();
    const auto layout = doc->layout->compute(fx::drawing::initial_expansion(*doc->tree));
    GraphScene a_scene, b_scene;
    for (GraphScene* s : {&a_scene, &b_scene}) {
      s->set_document(doc);
      s->show_layout(layout);
    }
    GraphView a(&a_scene), b(&b_scene);
    for (GraphView* v : {&a, &b}) {
      v->resize(500, 400);
      v->show();
    }
    QVERIFY(QTest::qWaitForWindowExposed(&a));
    ViewSync sync(&a, &b);
    sync.set_mappings(same, same);

    const fx::NodeId conv = doc->graph().find_node("/layer1/0/conv1/Conv");
    QVERIFY(conv != fx::kNoNode);
    // a leads: b gets a's zoom and shows the node where a shows it.
    a.zoom_by(1.5);
    a.centerOn(a_scene.node_rect(conv).center());
    QCOMPARE(b.transform(), a.transform());
    QVERIFY((on_screen(a, a_scene, conv) - on_screen(b, b_scene, conv)).manhattanLength() <= 3);

    // b leads.
    const fx::NodeId later = doc->graph().find_node("/layer1/0/conv2/Conv");
    QVERIFY(later != fx::kNoNode);
    b.zoom_by(0.8);
    b.centerOn(b_scene.node_rect(later).center());
    QCOMPARE(a.transform(), b.transform());
    QVERIFY((on_screen(a, a_scene, later) - on_screen(b, b_scene, later)).manhattanLength() <= 3);

    // Unlinked: b stays where it is.
    sync.set_linked(false);
    const QTransform kept = b.transform();
    const QPointF centre = b.mapToScene(b.viewport()->rect().center());
    a.zoom_by(1.5);
    a.centerOn(a_scene.node_rect(conv).center());
    QCOMPARE(b.transform(), kept);
    QCOMPARE(b.mapToScene(b.viewport()->rect().center()), centre);
    // Linked again: b catches up at once.
    sync.set_linked(true);
    QCOMPARE(b.transform(), a.transform());

    // Not ready (the other scene shows another graph): nothing follows.
    bool ready = false;
    sync.set_ready([&] { return ready; });
    a.zoom_by(1.25);
    QVERIFY(b.transform() != a.transform());
    QVERIFY(!sync.follow(false));
    ready = true;
    QVERIFY(sync.follow(false));
    QCOMPARE(b.transform(), a.transform());

    // The move alone, with a mapping that finds nothing: refused, nothing moves.
    const QTransform before = b.transform();
    QVERIFY(!ViewSync::map_view(a, b, [](fx::NodeId) { return std::vector<fx::NodeId>{}; }));
    QCOMPARE(b.transform(), before);
  }

  // Scrolling with the scroll bars (no zoom, no centring call) and zooming with the wheel
  // move the other view too: the box nearest the leader's centre is at the same place in
  // both, at the same zoom.
  void scroll_bars_and_wheel_keep_both_in_step() {
    auto doc = t::analysed_document();
    const auto layout = doc->layout->compute(fx::drawing::initial_expansion(*doc->tree));
    GraphScene a_scene, b_scene;
    for (GraphScene* s : {&a_scene, &b_scene}) {
      s->set_document(doc);
      s->show_layout(layout);
    }
    GraphView a(&a_scene), b(&b_scene);
    for (GraphView* v : {&a, &b}) {
      v->resize(300, 220);
      v->show();
    }
    QVERIFY(QTest::qWaitForWindowExposed(&a));
    ViewSync sync(&a, &b);
    sync.set_mappings(same, same);
    a.zoom_by(2.0);  // the scene no longer fits: both scroll bars have a range
    QVERIFY(a.verticalScrollBar()->maximum() > 0);
    auto lead_node = [&] {
      const int box = a_scene.closed_box_near(a.mapToScene(a.viewport()->rect().center()));
      return a_scene.node_of_box(box);
    };
    auto in_step = [&] {
      const fx::NodeId n = lead_node();
      return n != fx::kNoNode && b.transform() == a.transform() &&
             (on_screen(a, a_scene, n) - on_screen(b, b_scene, n)).manhattanLength() <= 3;
    };
    QVERIFY(in_step());
    for (int step = 1; step <= 3; ++step) {
      a.verticalScrollBar()->setValue(a.verticalScrollBar()->maximum() * step / 3);
      QVERIFY2(in_step(), qPrintable(QStringLiteral("after vertical scroll %1").arg(step)));
    }
    a.horizontalScrollBar()->setValue(a.horizontalScrollBar()->minimum());
    QVERIFY(in_step());
    // The wheel over b: b leads, a follows at b's new zoom.
    const QTransform zoom_before = b.transform();
    const QPoint at = b.viewport()->rect().center();
    QWheelEvent wheel(at, b.viewport()->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::ControlModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(b.viewport(), &wheel);
    QVERIFY(b.transform() != zoom_before);
    QCOMPARE(a.transform(), b.transform());
  }
};

QTEST_MAIN(TestViewSync)
#include "tst_view_sync.moc"
