// SPDX-License-Identifier: Apache-2.0
// The inspector shows how the model was read: a model whose weight reaches its MatMul
// through an Identity (PyTorch's habit for shared parameters), built here, opens with the
// Identity folded; the model page shows the canonical record `fxc inspect` prints, and
// the MatMul shows the weight as its own constant input, marked where it came from.
#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>

#include "document_fixture.h"
#include "onnx/model_factory.h"
#include "views/candidate_model.h"
#include "views/inspector.h"

using fx::views::Inspector;
namespace ft = fx::testing;

namespace {

// x[1,4] -> MatMul(Identity(W[4,4])) -> Relu -> y, and an Identity on an activation
// (x -> Identity -> Add) that is no weight.
onnx::ModelProto identity_on_weights() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("identity_on_weights");
  ft::add_float_io(g->add_input(), "x", {1, 4});
  ft::add_float_io(g->add_output(), "y", {1, 4});
  ft::add_initializer(g, "W", {4, 4});
  ft::add_node(g, "Identity", "w_identity", {"W"}, {"W_shared"});
  ft::add_node(g, "Identity", "x_identity", {"x"}, {"x_copy"});
  ft::add_node(g, "MatMul", "matmul", {"x_copy", "W_shared"}, {"h"});
  ft::add_node(g, "Relu", "relu", {"h"}, {"y"});
  return m;
}

// x[1,4,seq] -> Mul(scale) -> Softmax(axis -1) -> Relu -> y: the Softmax row is the
// sequence, so the group's on-chip footprint grows with the assumed seq.
onnx::ModelProto scaled_softmax() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("scaled_softmax");
  ft::add_float_io(g->add_input(), "x", {1, 4, 0}, {"", "", "seq"});
  ft::add_float_io(g->add_output(), "y", {1, 4, 0}, {"", "", "seq"});
  ft::add_initializer(g, "scale", {});
  ft::add_node(g, "Mul", "mul", {"x", "scale"}, {"m"});
  auto* sm = ft::add_node(g, "Softmax", "softmax", {"m"}, {"s"});
  auto* axis = sm->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-1);
  ft::add_node(g, "Relu", "relu", {"s"}, {"y"});
  return m;
}

// As DocumentController builds it: opened, shapes inferred, analysed with the dims the
// model was read with.
std::shared_ptr<fx::views::ModelDocument> analysed(const QString& path,
                                                   const fx::views::AnalysisSettings& s) {
  auto doc = fx::views::open_document(path, s, fx::views::label_metrics(QFont()), {});
  fx::apply_value_types(doc->model, fx::infer_value_types(doc->model));
  fx::views::apply_analysis(*doc, std::move(*fx::views::run_analysis(doc->graph(), doc->path, s,
                                                                     doc->model.assumed_dims)));
  return doc;
}

}  // namespace

class TestInspector : public QObject {
  Q_OBJECT
 private slots:
  void shows_what_canonicalization_folded() {
    ft::TempDir dir;
    const std::string path = dir.file("identity_on_weights.onnx");
    ft::save(identity_on_weights(), path);
    auto doc = fx::views::test::analysed_document(QString::fromStdString(path));
    QCOMPARE(doc->graph().node_count(), std::size_t(2));  // both Identity gone

    Inspector inspector;
    inspector.show_model(*doc);
    const QString canonical = inspector.value_of(QStringLiteral("Canonical"));
    QVERIFY2(canonical.contains(QStringLiteral("removed 2 Identity (1 on weights)")),
             qPrintable(canonical));
    QVERIFY2(canonical.contains(QStringLiteral("4 -> 2 nodes")), qPrintable(canonical));
    // The record `fxc inspect` prints, less its "canonical: " prefix.
    QCOMPARE(QStringLiteral("canonical: ") + canonical,
             QString::fromStdString(doc->model.canonical.summary()));
    // The file names no producer (as paddle2onnx's exports do): the row says so.
    QCOMPARE(inspector.value_of(QStringLiteral("Producer")),
             QStringLiteral("not recorded in the file"));

    const fx::NodeId matmul = doc->graph().find_node("matmul");
    QVERIFY(matmul != fx::kNoNode);
    inspector.show_node(*doc, matmul);
    const QString w = inspector.value_of(QStringLiteral("W"));
    QVERIFY2(w.contains(QStringLiteral("constant")), qPrintable(w));
    QVERIFY2(w.contains(QStringLiteral("Identity")), qPrintable(w));
    const QString x = inspector.value_of(QStringLiteral("x"));
    QVERIFY2(!x.isEmpty() && !x.contains(QStringLiteral("Identity")), qPrintable(x));
  }

  // A rank-0 tensor reads "scalar" in the inspector as on the graph's edges, not "[]".
  void a_scalar_reads_scalar() {
    ft::TempDir dir;
    const std::string path = dir.file("scaled_softmax.onnx");
    ft::save(scaled_softmax(), path);
    auto doc = fx::views::test::analysed_document(QString::fromStdString(path));
    const fx::NodeId mul = doc->graph().find_node("mul");
    QVERIFY(mul != fx::kNoNode);
    Inspector inspector;
    inspector.show_node(*doc, mul);
    const QString scale = inspector.value_of(QStringLiteral("scale"));
    QVERIFY2(scale.startsWith(QStringLiteral("float32 scalar")), qPrintable(scale));
  }

  // A group legal only at the assumed seq (its Softmax row fits on a chip at seq=128, not
  // at 16 times that) carries fxc analyze's note into the candidate table's tip, the
  // inspector and the saved plan; bound, it carries none.
  void a_group_legal_only_at_an_assumed_dim_says_so() {
    ft::TempDir dir;
    const std::string path = dir.file("scaled_softmax.onnx");
    ft::save(scaled_softmax(), path);
    const QString model = QString::fromStdString(path);
    fx::views::AnalysisSettings s = fx::views::test::h100_settings();
    s.threshold = 0;
    auto footprint = [&](int64_t seq) {
      fx::views::AnalysisSettings bound = s;
      bound.dims["seq"] = seq;
      auto doc = analysed(model, bound);
      if (doc->plan.groups().size() != 1) return int64_t(-1);
      const fx::FusionGroup& g = doc->plan.groups()[0];
      return g.assumed_note.empty() ? g.estimate.footprint_bytes : int64_t(-2);  // bound: no note
    };
    const int64_t fits = footprint(128), too_big = footprint(2048);
    QVERIFY2(fits > 0 && too_big > fits,
             qPrintable(QStringLiteral("%1 %2").arg(fits).arg(too_big)));
    std::ifstream in(FX_RESOURCES_DIR "/devices/nvidia-h100.json");
    auto dev = nlohmann::json::parse(in);
    dev["name"] = "small-chip";
    dev["onchip_capacity_bytes"] = int64_t(double(fits + too_big) / 2 / 0.8);
    const std::string device = dir.file("small_chip.json");
    std::ofstream(device) << dev.dump();
    s.device = QString::fromStdString(device);

    auto doc = analysed(model, s);
    QCOMPARE(doc->model.assumed_dims.size(), std::size_t(1));
    QCOMPARE(doc->model.assumed_dims[0].value, int64_t(128));
    QCOMPARE(doc->plan.groups().size(), std::size_t(1));
    const std::string note =
        "legal for the assumed seq=128 (over on-chip capacity at seq=2048); rebind to check";
    QCOMPARE(doc->plan.groups()[0].assumed_note, note);

    fx::views::CandidateModel table;
    table.set_plan(&doc->plan);
    const QString tip =
        table.index(0, fx::views::CandidateModel::Group).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("Note: ") + QString::fromStdString(note)),
             qPrintable(tip));

    Inspector inspector;
    inspector.show_fusion_group(*doc, 0);
    QCOMPARE(inspector.value_of(QStringLiteral("Assumed dims")), QString::fromStdString(note));

    const nlohmann::json saved = doc->plan.to_json();
    QCOMPARE(saved.at("groups").at(0).value("assumed_note", ""), note);
    QCOMPARE(fx::FusionPlan::from_json(saved).groups()[0].assumed_note, note);
  }
};

QTEST_MAIN(TestInspector)
#include "tst_inspector.moc"
