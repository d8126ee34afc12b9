// SPDX-License-Identifier: Apache-2.0
// The graph as the scene paints it, on the sample ResNet-style model (tiny_cnn: a stem,
// one basic block with an identity skip, and more layers) opened fully:
//   - the identity skip into the block's Add is drawn beside the block's chain, not
//     under its boxes (boxes paint above edges: a line under them vanishes);
//   - no edge crosses an open frame's title; an edge into a frame enters through its
//     top border beside the title, one out of it leaves through the bottom (the sample
//     models and the corpus' ResNet-18, MobileNetV3-small, BERT-mini, ViT-B/16, GoogLeNet,
//     Inception v3);
//   - every title and box label fits its box as the scene's font measures it;
//   - no fusion hull covers a frame's title bar, yet each still holds its members'
//     boxes (a group that runs from the patch embedding into the first encoder layer
//     is drawn in pieces, one per frame);
//   - weights are lines of their op's box until View > Constants as Nodes (or a
//     double-click on such an op) draws them as boxes, and back.
#include <QtTest>

#include <set>

#include <QAction>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "../drawing/frame_crossings.h"
#include "document_fixture.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/main_window.h"

using fx::views::BoxItem;
using fx::views::EdgeItem;
using fx::views::GraphScene;
using fx::views::HullItem;
namespace t = fx::views::test;

namespace {

// Whether the painted line passes through the inside of r (its ends on r's border
// do not count).
bool path_enters(const QPainterPath& path, const QRectF& r) {
  const QRectF inside = r.adjusted(1, 1, -1, -1);
  for (int k = 0; k <= 400; ++k)
    if (inside.contains(path.pointAtPercent(k / 400.0))) return true;
  return false;
}

fx::drawing::Expansion all_open(const fx::drawing::ScopeTree& tree) {
  fx::drawing::Expansion e(tree.group_count());
  for (std::size_t g = 0; g < tree.group_count(); ++g) e.set_open(fx::drawing::GroupId(g), true);
  return e;
}

}  // namespace

class TestGraphDrawing : public QObject {
  Q_OBJECT
 private slots:
  void skips_are_visible_and_titles_are_whole() {
    auto doc = t::analysed_document();
    GraphScene scene;
    scene.set_document(doc);
    scene.show_layout(doc->layout->compute(all_open(*doc->tree)));
    const auto& layout = scene.current_layout();
    const double header = doc->layout->frame_header();

    std::vector<const BoxItem*> boxes(layout.boxes.size(), nullptr);
    std::vector<const EdgeItem*> edges;
    for (QGraphicsItem* it : scene.items()) {
      if (auto* b = qgraphicsitem_cast<BoxItem*>(it)) boxes[std::size_t(b->index())] = b;
      if (auto* e = qgraphicsitem_cast<EdgeItem*>(it)) edges.push_back(e);
    }
    QCOMPARE(edges.size(), layout.edges.size());
    // scene.items() order is not the layout's: match each layout edge to its item by path.
    auto item_of = [&](const fx::drawing::SceneEdge& e) -> const EdgeItem* {
      const QPointF start(e.points.front().x, e.points.front().y);
      for (const EdgeItem* item : edges)
        if ((item->path().pointAtPercent(0) - start).manhattanLength() < 0.01) {
          const QPointF end = item->path().currentPosition();
          const QPointF want = e.has_arrow ? QPointF(e.arrow_tip.x, e.arrow_tip.y)
                                           : QPointF(e.points.back().x, e.points.back().y);
          if ((end - want).manhattanLength() < 0.01) return item;
        }
      return nullptr;
    };

    const fx::Graph& g = doc->drawn_graph();
    const fx::NodeId stem = g.find_node("/relu/Relu");
    const fx::NodeId add = g.find_node("/layer1/0/Add");
    QVERIFY(stem != fx::kNoNode && add != fx::kNoNode);
    bool skip_seen = false;
    for (const auto& e : layout.edges) {
      const EdgeItem* item = item_of(e);
      QVERIFY(item);
      for (std::size_t b = 0; b < layout.boxes.size(); ++b) {
        if (int(b) == e.from || int(b) == e.to) continue;
        const auto& sb = layout.boxes[b];
        // A frame's title is written on its top border; edges pass the border beside it.
        const QRectF r(sb.x, sb.y, sb.open ? sb.title_width : sb.width,
                       sb.open ? header : sb.height);
        QVERIFY2(!path_enters(item->path(), r),
                 qPrintable(QStringLiteral("an edge crosses %1 %2")
                                .arg(sb.open ? QStringLiteral("the title bar of") : QString())
                                .arg(boxes[b]->toolTip().section(QLatin1Char('\n'), 0, 0))));
      }
      if (e.from == layout.box_of_node[std::size_t(stem)] &&
          e.to == layout.box_of_node[std::size_t(add)]) {
        skip_seen = true;
        // Beside the block's chain: the path leaves the column of the Add's centre by
        // more than half a box somewhere between its ends.
        const auto& to = layout.boxes[std::size_t(e.to)];
        const double column = to.x + to.width / 2;
        double farthest = 0;
        for (int k = 0; k <= 100; ++k)
          farthest =
              std::max(farthest, std::abs(item->path().pointAtPercent(k / 100.0).x() - column));
        QVERIFY(farthest > to.width / 2);
      }
    }
    QVERIFY(skip_seen);

    // Titles and labels, measured with the font the items paint in.
    QFont bold = scene.font();
    bold.setBold(true);
    const QFontMetricsF regular_fm(scene.font()), bold_fm(bold);
    int frames = 0;
    for (std::size_t b = 0; b < layout.boxes.size(); ++b) {
      const auto& sb = layout.boxes[b];
      const auto lines = fx::drawing::box_lines(g, *doc->tree, sb.item);
      if (sb.open) {
        ++frames;
        const QString title = QString::fromStdString(fx::drawing::frame_title(lines));
        // The frame paints its title 8 points in from each side.
        QVERIFY2(regular_fm.horizontalAdvance(title) <= sb.width - 16, qPrintable(title));
      } else {
        const QFontMetricsF& fm = sb.item.kind == fx::drawing::Item::Group ? bold_fm : regular_fm;
        for (const auto& l : lines)
          QVERIFY2(fm.horizontalAdvance(QString::fromStdString(l)) <= sb.width, l.c_str());
      }
    }
    QVERIFY(frames >= 3);
  }

  void edges_cross_frames_at_top_and_bottom_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("tiny_cnn") << t::kTinyCnn;
    QTest::newRow("tiny_transformer") << t::kTinyTransformer;
    for (const char* m :
         {"resnet18", "mobilenet_v3_small", "bert_mini", "vit_b_16", "googlenet", "inception_v3"})
      QTest::newRow(m) << QStringLiteral(FX_SOURCE_DIR "/bench/cache/corpus/%1.onnx").arg(m);
  }

  // Every group open, then every edge's geometry: one into a frame crosses its outline
  // once, at the top right of the title (the MaxPool's edge into ResNet-18's first
  // block went round the right of `layer1` and in through its side); one out of a frame
  // once, at the bottom; any other never; no edge crosses a title or a closed box.
  void edges_cross_frames_at_top_and_bottom() {
    QFETCH(QString, path);
    if (!QFileInfo::exists(path)) QSKIP("corpus not linked at bench/cache/corpus");
    auto doc = t::analysed_document(path);
    const auto layout = doc->layout->compute(all_open(*doc->tree));
    int into = 0;
    for (const auto& e : layout.edges)
      for (const auto& f : layout.boxes) {
        if (!f.open) continue;
        const fx::drawing::Rect fr{f.x, f.y, f.width, f.height};
        const auto& a = layout.boxes[std::size_t(e.from)];
        const auto& b = layout.boxes[std::size_t(e.to)];
        into += fx::drawing::frame_check::holds(fr, {b.x, b.y, b.width, b.height}) &&
                !fx::drawing::frame_check::holds(fr, {a.x, a.y, a.width, a.height});
      }
    QVERIFY(into > 0);  // not vacuous: some edge enters a frame
    const auto breaks =
        fx::drawing::frame_check::frame_rule_breaks(layout, doc->layout->frame_header());
    for (std::size_t i = 0; i < breaks.size() && i < 10; ++i) qWarning("%s", breaks[i].c_str());
    QVERIFY2(breaks.empty(), qPrintable(QStringLiteral("%1 of %2 edges break a frame rule")
                                            .arg(breaks.size())
                                            .arg(layout.edges.size())));
  }

  void hulls_never_cover_title_bars_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("spans_frames");  // some group has members in two frames
    QTest::newRow("tiny_cnn") << t::kTinyCnn << false;
    QTest::newRow("tiny_transformer") << t::kTinyTransformer << false;
    for (const char* m : {"vit_b_16", "bert_mini"})
      QTest::newRow(m) << QStringLiteral(FX_SOURCE_DIR "/bench/cache/corpus/%1.onnx").arg(m)
                       << (std::string(m) == "vit_b_16");
  }

  void hulls_never_cover_title_bars() {
    QFETCH(QString, path);
    QFETCH(bool, spans_frames);
    if (!QFileInfo::exists(path)) QSKIP("corpus not linked at bench/cache/corpus");
    auto doc = t::analysed_document(path);
    GraphScene scene;
    scene.set_document(doc);
    scene.show_layout(doc->layout->compute(all_open(*doc->tree)));
    const auto& layout = scene.current_layout();
    const double header = doc->layout->frame_header();
    int hulls = 0;
    bool spanning = false;
    for (QGraphicsItem* it : scene.items()) {
      auto* hull = qgraphicsitem_cast<HullItem*>(it);
      if (!hull) continue;
      ++hulls;
      for (const auto& b : layout.boxes)
        if (b.open)
          QVERIFY2(!hull->path().intersects(
                       QRectF(b.x, b.y, b.width, header).adjusted(.5, .5, -.5, -.5)),
                   doc->tree->group(b.item.id).name.c_str());
      std::set<fx::drawing::GroupId> frames;
      for (std::size_t n = 0; n < layout.box_of_node.size(); ++n) {
        if (doc->group_of_node(fx::NodeId(n)) != hull->plan_group()) continue;
        const int b = layout.box_of_node[n];
        QVERIFY(b >= 0);
        const auto& sb = layout.boxes[std::size_t(b)];
        frames.insert(sb.parent);
        QVERIFY(hull->path().contains(QPointF(sb.x + sb.width / 2, sb.y + sb.height / 2)));
      }
      spanning |= frames.size() > 1;
    }
    QVERIFY(hulls > 0);
    if (spans_frames) QVERIFY(spanning);
    // Edges and their shape labels paint above the hulls (a hull's outline across a label
    // cut its first character) and below closed boxes.
    double top_hull = -1e9, lowest_edge = 1e9, highest_edge = -1e9, lowest_box = 1e9;
    for (QGraphicsItem* it : scene.items()) {
      if (qgraphicsitem_cast<HullItem*>(it)) top_hull = std::max(top_hull, it->zValue());
      if (qgraphicsitem_cast<EdgeItem*>(it)) {
        lowest_edge = std::min(lowest_edge, it->zValue());
        highest_edge = std::max(highest_edge, it->zValue());
      }
      if (auto* box = qgraphicsitem_cast<BoxItem*>(it); box && !box->is_open())
        lowest_box = std::min(lowest_box, it->zValue());
    }
    QVERIFY2(lowest_edge > top_hull, "an edge (and its label) paints under a group's hull");
    QVERIFY2(highest_edge < lowest_box, "an edge paints over a box");
  }

  void constants_as_nodes_on_demand() {
    QTemporaryDir dir;
    fx::views::MainWindow window;
    window.set_analysis_settings(t::h100_settings());
    window.set_autosave_dir(dir.path());
    window.resize(1200, 800);
    window.show();
    QSignalSpy opened(&window, &fx::views::MainWindow::model_opened);
    window.open_model(t::kTinyCnn);
    QVERIFY(opened.wait(30000) || opened.count() > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!window.is_busy(), 30000);
    auto node_boxes = [&] {
      int n = 0;
      for (const auto& b : window.scene()->current_layout().boxes)
        n += b.item.kind == fx::drawing::Item::Node;
      return n;
    };
    auto conv_lines = [&] {
      const auto* doc = window.document();
      const fx::NodeId conv = doc->graph().find_node("/conv1/Conv");
      return fx::drawing::box_lines(doc->drawn_graph(), *doc->tree,
                                    {fx::drawing::Item::Node, conv});
    };
    const int folded = node_boxes();
    QVERIFY(conv_lines().size() >= 2);  // "Conv", "W ⟨16×3×3×3⟩"
    QCOMPARE(QString::fromStdString(conv_lines()[1]).left(3), QStringLiteral("W ⟨"));

    auto* action = window.findChild<QAction*>(QStringLiteral("ConstantsAsNodesAction"));
    QVERIFY(action);
    QSignalSpy shown(&window, &fx::views::MainWindow::layout_shown);
    action->trigger();
    QVERIFY(shown.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(!window.is_busy(), 30000);
    QVERIFY(action->isChecked());
    // Every weight is a box now (tiny_cnn's canonical form: its Convs' weights and biases,
    // BNs folded into them) and the Conv lists none.
    int weights = 0;
    for (const auto& v : window.document()->graph().values())
      weights += v.is_constant() && !v.consumers.empty();
    QVERIFY(weights >= 10);
    QVERIFY2(node_boxes() >= folded + weights,
             qPrintable(QStringLiteral("%1 boxes, %2 before, %3 weights")
                            .arg(node_boxes())
                            .arg(folded)
                            .arg(weights)));
    QCOMPARE(conv_lines().size(), std::size_t(1));
    // The model's own nodes keep their ids: the plan still colours them.
    QVERIFY(window.document()->is_model_node(window.document()->graph().find_node("/conv1/Conv")));

    action->trigger();
    QVERIFY(shown.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(!window.is_busy(), 30000);
    QCOMPARE(node_boxes(), folded);
    QVERIFY(conv_lines().size() >= 2);
  }
};

QTEST_MAIN(TestGraphDrawing)
#include "tst_graph_drawing.moc"
