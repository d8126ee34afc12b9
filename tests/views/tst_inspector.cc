// SPDX-License-Identifier: Apache-2.0
// The inspector shows how the model was read: a model whose weight reaches its MatMul
// through an Identity (PyTorch's habit for shared parameters), built here, opens with the
// Identity folded; the model page shows the canonical record `fxc inspect` prints, and
// the MatMul shows the weight as its own constant input, marked where it came from.
#include <QtTest>

#include "document_fixture.h"
#include "onnx/model_factory.h"
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

    const fx::NodeId matmul = doc->graph().find_node("matmul");
    QVERIFY(matmul != fx::kNoNode);
    inspector.show_node(*doc, matmul);
    const QString w = inspector.value_of(QStringLiteral("W"));
    QVERIFY2(w.contains(QStringLiteral("constant")), qPrintable(w));
    QVERIFY2(w.contains(QStringLiteral("Identity")), qPrintable(w));
    const QString x = inspector.value_of(QStringLiteral("x"));
    QVERIFY2(!x.isEmpty() && !x.contains(QStringLiteral("Identity")), qPrintable(x));
  }
};

QTEST_MAIN(TestInspector)
#include "tst_inspector.moc"
