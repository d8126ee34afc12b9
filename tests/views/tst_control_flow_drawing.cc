// SPDX-License-Identifier: Apache-2.0
// Control flow in the explorer: a model with a Loop, opened the way the window opens
// one, is drawn with the Loop as a group holding the Loop node and a "body" group with
// the body's ops; closing the group hides them in one box. A body node shown in the
// inspector gives its op and values but no cost or plan group (only the model's own
// nodes have those), while the model's nodes keep theirs.
#include <QTemporaryDir>
#include <QtTest>

#include <onnx/onnx_pb.h>

#include <fstream>
#include <memory>
#include <set>

#include "document_fixture.h"
#include "drawing/visible_graph.h"
#include "views/candidate_panel.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/inspector.h"
#include "views/main_window.h"
#include "views/model_document.h"

namespace {

void tensor_io(onnx::ValueInfoProto* vi, const std::string& name, int elem,
               const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* s = t->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                          const std::vector<std::string>& in, const std::vector<std::string>& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

// x[2] -> Relu -> Loop(M, true, s0 = relu): body s_out = s_in + r (r from outside),
// i_f = Cast(i), scan_out = s_out * i_f, cond = i < 3 -> Sigmoid(s_final) -> y.
// `known_shapes`: the body's Add and Mul read only the loop-carried s_in (shape [2]), so
// that their estimates are known and the analysis can group them.
void write_loop_model(const QString& path, bool known_shapes = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("loop_drawing");
  constexpr int kFloat = onnx::TensorProto::FLOAT, kInt64 = onnx::TensorProto::INT64,
                kBool = onnx::TensorProto::BOOL;
  tensor_io(g->add_input(), "M", kInt64, {});
  tensor_io(g->add_input(), "x", kFloat, {2});
  tensor_io(g->add_output(), "y", kFloat, {2});
  auto* three = g->add_initializer();
  three->set_name("three");
  three->set_data_type(kInt64);
  three->add_int64_data(3);
  auto* cond = g->add_initializer();
  cond->set_name("true_c");
  cond->set_data_type(kBool);
  cond->add_int32_data(1);
  add_node(g, "Relu", "relu", {"x"}, {"r"});
  auto* loop = add_node(g, "Loop", "the_loop", {"M", "true_c", "r"}, {"s_final", "scan"});
  add_node(g, "Sigmoid", "gate", {"s_final"}, {"y"});
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* b = a->mutable_g();
  b->set_name("body");
  tensor_io(b->add_input(), "i", kInt64, {});
  tensor_io(b->add_input(), "c_in", kBool, {});
  tensor_io(b->add_input(), "s_in", kFloat, {2});
  add_node(b, "Add", "b_add", {"s_in", known_shapes ? "s_in" : "r"}, {"s_out"});
  auto* cast = add_node(b, "Cast", "b_cast", {"i"}, {"i_f"});
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(kFloat);
  add_node(b, "Mul", "b_scan", {"s_out", known_shapes ? "s_in" : "i_f"}, {"scan_out"});
  add_node(b, "Less", "b_less", {"i", "three"}, {"c_out"});
  tensor_io(b->add_output(), "c_out", kBool, {});
  tensor_io(b->add_output(), "s_out", kFloat, {2});
  tensor_io(b->add_output(), "scan_out", kFloat, {2});
  std::ofstream f(path.toStdString(), std::ios::binary);
  QVERIFY(m.SerializeToOstream(&f));
}

// The value of the first inspector row named `key` under the section `title`.
QString inspector_value(const fx::views::Inspector& in, const QString& title, const QString& key) {
  for (int i = 0; i < in.topLevelItemCount(); ++i) {
    const QTreeWidgetItem* sec = in.topLevelItem(i);
    if (!sec->text(0).startsWith(title)) continue;
    for (int j = 0; j < sec->childCount(); ++j)
      if (sec->child(j)->text(0) == key) return sec->child(j)->text(1);
  }
  return {};
}

bool has_section(const fx::views::Inspector& in, const QString& title) {
  for (int i = 0; i < in.topLevelItemCount(); ++i)
    if (in.topLevelItem(i)->text(0).startsWith(title)) return true;
  return false;
}

}  // namespace

class TestControlFlowDrawing : public QObject {
  Q_OBJECT
 private slots:
  void loop_is_a_group_holding_its_body() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("loop.onnx"));
    write_loop_model(path);
    const auto doc = fx::views::test::analysed_document(path);
    doc->refresh_drawn_types();
    const fx::Graph& g = doc->graph();
    const fx::Graph& drawn = doc->drawn_graph();
    QCOMPARE(g.node_count(), std::size_t(3));  // relu, the_loop, gate
    QCOMPARE(drawn.node_count(), std::size_t(7));
    const fx::NodeId loop = g.find_node("the_loop");
    QVERIFY(loop != fx::kNoNode);
    QCOMPARE(drawn.node(loop).op_type, std::string("Loop"));  // same id in the copy

    // The tree: a group "the_loop" with the Loop node and a group "the_loop/body"
    // holding exactly the four body ops.
    const fx::drawing::ScopeTree& tree = *doc->tree;
    fx::drawing::GroupId loop_group = -1, body_group = -1;
    for (std::size_t i = 1; i < tree.group_count(); ++i) {
      if (tree.group(int(i)).path == "the_loop") loop_group = int(i);
      if (tree.group(int(i)).path == "the_loop/body") body_group = int(i);
    }
    QVERIFY(loop_group > 0);
    QVERIFY(body_group > 0);
    QCOMPARE(tree.group(body_group).parent, loop_group);
    bool holds_loop_node = false;
    for (const auto& it : tree.group(loop_group).children)
      holds_loop_node |= it.kind == fx::drawing::Item::Node && it.id == loop;
    QVERIFY(holds_loop_node);
    std::set<std::string> body_ops;
    for (const auto& it : tree.group(body_group).children) {
      QVERIFY(it.kind == fx::drawing::Item::Node);
      QVERIFY(!doc->is_model_node(it.id));
      body_ops.insert(drawn.node(it.id).op_type);
    }
    QCOMPARE(body_ops, (std::set<std::string>{"Add", "Cast", "Mul", "Less"}));

    // The scene, opened as the window opens it: everything fits, so the Loop's group
    // is an open frame and each body op is its own box.
    fx::views::GraphScene scene;
    scene.set_document(doc);
    const fx::drawing::SceneLayout layout =
        doc->layout->compute(fx::drawing::initial_expansion(tree));
    scene.show_layout(layout);
    const fx::NodeId add = drawn.find_node("the_loop/body/b_add");
    QVERIFY(add != fx::kNoNode);
    fx::views::BoxItem* add_box = scene.box_of_node(add);
    QVERIFY(add_box);
    QVERIFY(add_box->item().kind == fx::drawing::Item::Node);
    QVERIFY(add_box->toolTip().contains(QStringLiteral("Add")));
    int open_loop_frames = 0;
    for (QGraphicsItem* it : scene.items())
      if (auto* box = qgraphicsitem_cast<fx::views::BoxItem*>(it))
        open_loop_frames += box->item().kind == fx::drawing::Item::Group &&
                            box->item().id == loop_group && box->is_open();
    QCOMPARE(open_loop_frames, 1);
    // The outer value r reaches the body: an edge from the Relu into the Add carries it.
    const fx::ValueId r = g.find_value("r");
    const int relu_box = scene.box_of_node(g.find_node("relu"))->index();
    bool r_into_body = false;
    for (const auto& e : layout.edges)
      r_into_body |= e.value == r && e.from == relu_box && e.to == add_box->index();
    QVERIFY(r_into_body);
    // Overlays sum the model's costs and skip body nodes (they have none).
    scene.set_overlay(fx::views::Overlay::Bytes);
    scene.set_overlay(fx::views::Overlay::Flops);

    // Selecting a body node shows it; the model's nodes keep cost and plan rows.
    fx::views::Inspector inspector;
    QObject::connect(&scene, &fx::views::GraphScene::node_selected, &inspector,
                     [&](fx::NodeId n) { inspector.show_node(*doc, n); });
    add_box->setSelected(true);
    QCOMPARE(inspector_value(inspector, QStringLiteral("Node"), QStringLiteral("Op")),
             QStringLiteral("Add"));
    QVERIFY(!has_section(inspector, QStringLiteral("Cost")));
    QVERIFY(inspector_value(inspector, QStringLiteral("Fusion"), QStringLiteral("Group"))
                .contains(QStringLiteral("control-flow body")));
    scene.clearSelection();
    scene.box_of_node(loop)->setSelected(true);
    QCOMPARE(inspector_value(inspector, QStringLiteral("Node"), QStringLiteral("Op")),
             QStringLiteral("Loop"));
    QVERIFY(has_section(inspector, QStringLiteral("Cost")));
    inspector.show_scope_group(*doc, loop_group);  // sums the model's costs only
    QVERIFY(!inspector_value(inspector, QStringLiteral("Group"), QStringLiteral("Bytes moved"))
                 .isEmpty());

    // Closed, the group is one box showing the Loop and its body.
    fx::drawing::Expansion closed = fx::drawing::initial_expansion(tree);
    closed.set_open(loop_group, false);
    scene.show_layout(doc->layout->compute(closed));
    fx::views::BoxItem* group_box = scene.box_of_node(add);
    QVERIFY(group_box);
    QVERIFY(group_box->item().kind == fx::drawing::Item::Group);
    QCOMPARE(group_box->item().id, loop_group);
    QCOMPARE(scene.box_of_node(loop), group_box);
  }

  // The main graph has no group (Relu -> Loop -> Sigmoid cross the boundary) but the body
  // has: the empty candidate table says so instead of "no group worth fusing".
  void an_empty_plan_names_the_groups_inside_bodies() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("loop.onnx"));
    write_loop_model(path, true);
    fx::views::MainWindow w;
    fx::views::AnalysisSettings s = fx::views::test::h100_settings();
    s.threshold = 0;
    w.set_analysis_settings(s);
    w.set_autosave_dir(dir.path());
    QSignalSpy opened(&w, &fx::views::MainWindow::model_opened);
    w.open_model(path);
    QVERIFY(opened.wait(30000));
    QVERIFY(w.document()->analysis.has_value());
    QVERIFY(w.document()->plan.groups().empty());
    std::size_t body_groups = 0;
    for (const auto& sa : w.document()->analysis->subgraphs) body_groups += sa.result.groups.size();
    QVERIFY2(body_groups > 0, "the Loop body's Add -> Mul is expected to be a group");
    const QString note = w.candidate_panel()->empty_note();
    QVERIFY2(note.contains(QStringLiteral("%1 group(s) were found inside its If/Loop/Scan bodies")
                               .arg(body_groups)),
             qPrintable(note));
  }

  void a_model_without_control_flow_draws_itself() {
    const auto doc = fx::views::test::analysed_document();
    QVERIFY(!doc->drawn);
    QCOMPARE(&doc->drawn_graph(), &doc->graph());
  }
};

QTEST_MAIN(TestControlFlowDrawing)
#include "tst_control_flow_drawing.moc"
