// SPDX-License-Identifier: Apache-2.0
// Shape labels on the graph's edges: where edges converge on one node (a Concat of
// six branches, a residual Add), every label shown must be readable: clear of the
// other labels, of the node boxes, of frames' title bars and of every edge's line
// (a connector's horizontal run between frames, the crossing edges of a LayerNorm
// chain). A label with no free spot for its full form ("[1,64,35,35]") takes its short
// form ("64×35×35", the batch of 1 left out) anywhere along its edge; only a label with
// no spot for either is dropped (the edge's tooltip keeps the shape), and into a box
// where edges converge only one whose shape another edge into that box shows: every
// edge into a Concat of many branches (Inception v3, GoogLeNet, DenseNet-121) shows its
// shape or has a sibling that does. Checked
// on generated graphs and on real layouts: the sample models, and corpus models where
// the corpus is linked (bench/cache/corpus).
#include <QtTest>

#include <QFileInfo>

#include <memory>
#include <set>

#include "document_fixture.h"
#include "drawing/edge_router.h"
#include "drawing/hierarchical_layout.h"
#include "ir/graph_builder.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/label_placer.h"
#include "views/model_document.h"

namespace {

// Six branches of the same input, each a Relu with a long shape, into one Concat; then
// a residual Add of the Concat with a Sigmoid of itself.
fx::Graph converging_graph() {
  fx::GraphBuilder b;
  const fx::ValueId x = b.input("x", {1, 197, 768});
  std::vector<fx::ValueId> branches;
  for (int i = 0; i < 6; ++i)
    branches.push_back(b.op("Relu", {x}, {}, "branch" + std::to_string(i)));
  const fx::ValueId cat =
      b.op("Concat", branches, {{"axis", int64_t{1}}}, "concat", fx::Shape::of({1, 1182, 768}));
  const fx::ValueId s = b.op("Sigmoid", {cat}, {}, "gate");
  b.output(b.op("Add", {cat, s}, {}, "residual"));
  return b.build();
}

std::shared_ptr<fx::views::ModelDocument> document(fx::Graph g, const QFont& font) {
  auto doc = std::make_shared<fx::views::ModelDocument>();
  doc->model.graph = std::move(g);
  doc->tree = std::make_unique<fx::drawing::ScopeTree>(doc->model.graph);
  doc->layout = std::make_unique<fx::drawing::HierarchicalLayout>(doc->model.graph, *doc->tree,
                                                                  fx::views::label_metrics(font));
  return doc;
}

fx::drawing::Expansion all_open(const fx::drawing::ScopeTree& tree) {
  fx::drawing::Expansion e(tree.group_count());
  for (std::size_t g = 0; g < tree.group_count(); ++g) e.set_open(fx::drawing::GroupId(g), true);
  return e;
}

// Whether the painted line passes through the inside of r.
bool path_enters(const QPainterPath& path, const QRectF& r) {
  const QRectF inside = r.adjusted(0.5, 0.5, -0.5, -0.5);
  if (!path.boundingRect().intersects(inside)) return false;
  const double length = path.length();
  const int samples = std::max(8, int(length));  // one a scene unit
  for (int k = 0; k <= samples; ++k)
    if (inside.contains(path.pointAtPercent(double(k) / samples))) return true;
  return false;
}

}  // namespace

class TestEdgeLabels : public QObject {
  Q_OBJECT
 private slots:
  void placer_takes_the_first_free_spot() {
    fx::views::LabelPlacer placer(10);
    placer.occupy(QRectF(0, 0, 50, 20));
    QVERIFY(!placer.is_clear(QRectF(40, 10, 30, 5)));
    QVERIFY(placer.is_clear(QRectF(51, 0, 30, 20)));
    const QPointF spots[] = {QPointF(10, 5), QPointF(60, 5), QPointF(120, 5)};
    const auto got = placer.place(spots, QSizeF(30, 10));
    QVERIFY(got.has_value());
    QCOMPARE(*got, QPointF(60, 5));
    // That spot is taken now: the next label of the same size goes further.
    const auto next = placer.place(spots, QSizeF(30, 10));
    QVERIFY(next.has_value());
    QCOMPARE(*next, QPointF(120, 5));
    const QPointF none[] = {QPointF(0, 0), QPointF(65, 8)};
    QVERIFY(!placer.place(none, QSizeF(30, 10)).has_value());
  }

  void converging_labels_do_not_overlap() {
    fx::views::GraphScene scene;
    auto doc = document(converging_graph(), scene.font());
    scene.set_document(doc);
    fx::drawing::Expansion all(doc->tree->group_count());
    scene.show_layout(doc->layout->compute(all));

    std::vector<QRectF> labels;
    int edges = 0;
    QStringList texts, shown;
    for (QGraphicsItem* it : scene.items())
      if (auto* e = qgraphicsitem_cast<fx::views::EdgeItem*>(it)) {
        ++edges;
        texts << e->text();
        if (!e->label_rect().isEmpty()) {
          labels.push_back(e->label_rect());
          shown << e->text();
        }
      }
    // 6 Relu -> Concat, Concat -> Sigmoid, Concat -> Add, Sigmoid -> Add at least (the
    // graph input's edges depend on whether inputs get boxes).
    QVERIFY2(edges >= 9, qPrintable(QString::number(edges)));
    // The layout keeps no room for labels between edges converging on one box (dot's
    // ranks are tight): of the six Relu -> Concat edges, all [1,197,768], some leave
    // their label out, by the rule: the shape is shown on at least one of them. Every
    // other edge keeps its label.
    for (const QString& t : texts) QVERIFY2(shown.contains(t), qPrintable(t));
    QVERIFY2(labels.size() >= 4, qPrintable(QString::number(labels.size())));
    for (std::size_t i = 0; i < labels.size(); ++i)
      for (std::size_t j = i + 1; j < labels.size(); ++j)
        QVERIFY2(!labels[i].intersects(labels[j]),
                 qPrintable(QStringLiteral("labels %1 and %2 overlap").arg(i).arg(j)));
    for (const auto& b : scene.current_layout().boxes) {
      if (b.open) continue;
      const QRectF box(b.x, b.y, b.width, b.height);
      for (const QRectF& l : labels) QVERIFY(!l.intersects(box));
    }
    for (QGraphicsItem* it : scene.items())
      if (auto* e = qgraphicsitem_cast<fx::views::EdgeItem*>(it))
        for (const QRectF& l : labels) QVERIFY(!path_enters(e->path(), l));
  }

  void converging_edges_keep_their_labels_data() {
    QTest::addColumn<QString>("path");
    for (const char* m : {"inception_v3", "googlenet", "densenet121"})
      QTest::newRow(m) << QStringLiteral(FX_SOURCE_DIR "/bench/cache/corpus/%1.onnx").arg(m);
  }

  // Every group open; each edge into a Concat of four inputs or more shows a label, in
  // full or short form, clear of everything (labels_are_clear_on_real_layouts checks
  // the clearance on other models; here it is checked for these labels too).
  void converging_edges_keep_their_labels() {
    QFETCH(QString, path);
    if (!QFileInfo::exists(path)) QSKIP("corpus not linked at bench/cache/corpus");
    auto doc = fx::views::test::analysed_document(path);
    fx::views::GraphScene scene;
    scene.set_document(doc);
    scene.show_layout(doc->layout->compute(all_open(*doc->tree)));
    const auto& layout = scene.current_layout();
    const fx::Graph& g = doc->drawn_graph();
    std::vector<int> fan_in(layout.boxes.size(), 0);
    for (const auto& e : layout.edges) ++fan_in[std::size_t(e.to)];
    std::vector<const fx::views::EdgeItem*> edges;
    for (QGraphicsItem* it : scene.items())
      if (auto* e = qgraphicsitem_cast<fx::views::EdgeItem*>(it)) edges.push_back(e);
    // Items are in no particular order: match each layout edge by where its line ends
    // (the ends read once: QPainterPath::pointAtPercent measures the whole path).
    std::vector<std::pair<QPointF, QPointF>> ends;
    for (const auto* item : edges)
      ends.push_back({item->path().pointAtPercent(0), item->path().currentPosition()});
    auto item_of = [&](const fx::drawing::SceneEdge& e) -> const fx::views::EdgeItem* {
      const QPointF start(e.points.front().x, e.points.front().y);
      const QPointF want = e.has_arrow ? QPointF(e.arrow_tip.x, e.arrow_tip.y)
                                       : QPointF(e.points.back().x, e.points.back().y);
      for (std::size_t k = 0; k < edges.size(); ++k)
        if ((ends[k].first - start).manhattanLength() < 0.01 &&
            (ends[k].second - want).manhattanLength() < 0.01)
          return edges[k];
      return nullptr;
    };
    int converging = 0, shown = 0, short_form = 0, by_rule = 0;
    std::vector<QRectF> rects;
    std::set<std::pair<int32_t, QString>> shown_into;  // (box, shape) labelled on some edge
    std::vector<std::pair<int32_t, QString>> left_out;
    for (const auto& e : layout.edges) {
      const auto& to = layout.boxes[std::size_t(e.to)];
      if (to.open || to.item.kind != fx::drawing::Item::Node ||
          g.node(to.item.id).op_type != "Concat" || fan_in[std::size_t(e.to)] < 4 ||
          e.value == fx::kNoValue || e.points.empty())
        continue;
      ++converging;
      const auto* item = item_of(e);
      QVERIFY(item);
      if (item->label().isEmpty()) {
        left_out.push_back({e.to, item->text()});
        continue;
      }
      ++shown;
      shown_into.insert({e.to, item->text()});
      short_form += !item->label().startsWith(QLatin1Char('['));
      rects.push_back(item->label_rect());
    }
    // The rule for what is left out: an edge whose shape another edge into the same
    // Concat shows.
    for (const auto& key : left_out) {
      QVERIFY2(
          shown_into.count(key),
          qPrintable(QStringLiteral("%1 into box %2 has no label").arg(key.second).arg(key.first)));
      ++by_rule;
    }
    qInfo(
        "%d edges into Concats of 4+ inputs: %d labelled (%d in short form), %d left out "
        "because a sibling shows the same shape",
        converging, shown, short_form, by_rule);
    QVERIFY(converging >= 4);
    // Each line flattened once (sampling a long connector's path per label is quadratic
    // on DenseNet's 900 edges).
    std::vector<QPolygonF> lines;
    for (const auto* e : edges)
      for (const QPolygonF& poly : e->path().toSubpathPolygons()) lines.push_back(poly);
    for (const QRectF& l : rects) {
      for (const auto& b : layout.boxes)
        if (!b.open) QVERIFY(!l.intersects(QRectF(b.x, b.y, b.width, b.height)));
      const fx::drawing::Rect r{l.x() + 0.5, l.y() + 0.5, l.width() - 1, l.height() - 1};
      for (const QPolygonF& poly : lines) {
        if (!poly.boundingRect().intersects(l)) continue;
        for (qsizetype k = 0; k + 1 < poly.size(); ++k)
          QVERIFY(!fx::drawing::segment_enters({poly[k].x(), poly[k].y()},
                                               {poly[k + 1].x(), poly[k + 1].y()}, r));
      }
    }
  }

  // A rank-0 tensor's edge reads "scalar" (Silero VAD's Equal deciding its If), not "[]".
  void a_scalar_edge_says_scalar() {
    fx::GraphBuilder b;
    const fx::ValueId x = b.input("x", {1, 16});
    const fx::ValueId r =
        b.op("ReduceMax", {x}, {{"keepdims", int64_t{0}}}, "max", fx::Shape::scalar());
    b.output(b.op("Sigmoid", {r}, {}, "gate", fx::Shape::scalar()));
    fx::views::GraphScene scene;
    auto doc = document(b.build(), scene.font());
    scene.set_document(doc);
    scene.show_layout(doc->layout->compute(fx::drawing::Expansion(doc->tree->group_count())));
    QStringList labels;
    for (QGraphicsItem* it : scene.items())
      if (auto* e = qgraphicsitem_cast<fx::views::EdgeItem*>(it)) labels << e->label();
    QVERIFY2(labels.contains(QStringLiteral("scalar")), qPrintable(labels.join(QLatin1Char('|'))));
    QVERIFY(!labels.contains(QStringLiteral("[]")));
  }

  void labels_are_clear_on_real_layouts_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("tiny_cnn") << fx::views::test::kTinyCnn;
    QTest::newRow("tiny_transformer") << fx::views::test::kTinyTransformer;
    for (const char* m : {"mobilenet_v3_small", "bert_mini", "resnet18", "ppocr_v4_det"})
      QTest::newRow(m) << QStringLiteral(FX_SOURCE_DIR "/bench/cache/corpus/%1.onnx").arg(m);
  }

  // Every group open: each label shown covers no box, no title bar, no other label and
  // no edge's line (its own included).
  void labels_are_clear_on_real_layouts() {
    QFETCH(QString, path);
    if (!QFileInfo::exists(path)) QSKIP("corpus not linked at bench/cache/corpus");
    auto doc = fx::views::test::analysed_document(path);
    fx::views::GraphScene scene;
    scene.set_document(doc);
    scene.show_layout(doc->layout->compute(all_open(*doc->tree)));
    const double header = doc->layout->frame_header();

    std::vector<const fx::views::EdgeItem*> edges;
    std::vector<QRectF> labels;
    for (QGraphicsItem* it : scene.items())
      if (auto* e = qgraphicsitem_cast<fx::views::EdgeItem*>(it)) {
        edges.push_back(e);
        if (!e->label_rect().isEmpty()) labels.push_back(e->label_rect());
      }
    QVERIFY(!edges.empty());
    // Most labels find a place: dropping them all would pass the checks below.
    QVERIFY2(
        labels.size() * 4 >= edges.size() * 3,
        qPrintable(QStringLiteral("%1 of %2 labels shown").arg(labels.size()).arg(edges.size())));
    for (std::size_t i = 0; i < labels.size(); ++i)
      for (std::size_t j = i + 1; j < labels.size(); ++j)
        QVERIFY2(!labels[i].intersects(labels[j]),
                 qPrintable(QStringLiteral("labels at (%1,%2) and (%3,%4) overlap")
                                .arg(labels[i].x())
                                .arg(labels[i].y())
                                .arg(labels[j].x())
                                .arg(labels[j].y())));
    for (const auto& b : scene.current_layout().boxes) {
      const QRectF box(b.x, b.y, b.width, b.open ? header : b.height);
      for (const QRectF& l : labels)
        QVERIFY2(!l.intersects(box), qPrintable(QStringLiteral("label at (%1,%2) covers a %3")
                                                    .arg(l.x())
                                                    .arg(l.y())
                                                    .arg(b.open ? "title bar" : "box")));
    }
    for (const fx::views::EdgeItem* e : edges)
      for (const QRectF& l : labels)
        QVERIFY2(
            !path_enters(e->path(), l),
            qPrintable(QStringLiteral("label at (%1,%2) lies on an edge").arg(l.x()).arg(l.y())));
  }
};

QTEST_MAIN(TestEdgeLabels)
#include "tst_edge_labels.moc"
