// SPDX-License-Identifier: Apache-2.0
// ViewSync without a window: two views of two scenes showing the same model; zooming and
// centring one moves the other to the matching nodes at the same zoom, either way round;
// unlinked, or not ready, nothing follows.
#include <QtTest>

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
};

QTEST_MAIN(TestViewSync)
#include "tst_view_sync.moc"
