// SPDX-License-Identifier: Apache-2.0
// The dims panel and DocumentController::set_dims: a model with symbolic dims opens with
// assumed values and candidates; the panel shows them marked "assumed"; applying an
// edited value reads the model again with it and keeps the user's decisions.
#include <QPushButton>
#include <QSpinBox>
#include <QTabBar>
#include <QtTest>

#include "document_fixture.h"
#include "views/dims_panel.h"
#include "views/document_controller.h"
#include "views/main_window.h"

using fx::views::DimsPanel;
using fx::views::DocumentController;
using fx::views::MainWindow;
namespace t = fx::views::test;

namespace {

int64_t dim_of(const fx::Graph& g, const std::string& value, std::size_t axis) {
  const fx::ValueId v = g.find_value(value);
  if (v == fx::kNoValue || g.value(v).shape.rank() <= axis) return -1;
  return g.value(v).shape[axis].value;
}

}  // namespace

class TestDimsPanel : public QObject {
  Q_OBJECT
 private slots:
  void assumed_dims_give_candidates_and_edits_rerun_them() {
    DocumentController c;
    c.set_settings(t::h100_settings());
    QSignalSpy opened(&c, &DocumentController::opened);
    c.open(t::kTinyTransformer);
    QVERIFY(opened.wait(30000));
    auto doc = c.document();
    std::map<std::string, int64_t> assumed;
    for (const auto& a : doc->model.assumed_dims) assumed[a.symbol] = a.value;
    QCOMPARE(assumed, (std::map<std::string, int64_t>{{"batch", 1}, {"seq", 128}}));
    QVERIFY(!doc->plan.groups().empty());  // no input needed to see candidates
    const std::string input = doc->graph().value(doc->graph().runtime_inputs()[0]).name;
    QCOMPARE(dim_of(doc->graph(), input, 1), int64_t(128));

    DimsPanel panel;
    panel.show_dims(doc->model, c.settings().dims);
    QCOMPARE(panel.value("seq"), int64_t(128));
    QVERIFY(panel.is_assumed("seq"));
    QVERIFY(panel.is_assumed("batch"));

    // Accept a group, then change seq in the panel: only the edited dim is sent.
    const std::string accepted = doc->plan.groups().front().id;
    QVERIFY(doc->plan.accept(accepted));
    std::map<std::string, int64_t> sent;
    connect(&panel, &DimsPanel::dims_changed, this, [&](const auto& d) {
      sent = d;
      c.set_dims(d);
    });
    const auto boxes = panel.findChildren<QSpinBox*>();
    QCOMPARE(boxes.size(), 2);
    boxes[1]->setValue(64);  // rows follow the assumed order: batch, seq
    panel.findChild<QPushButton*>()->click();
    QCOMPARE(sent, (std::map<std::string, int64_t>{{"seq", 64}}));
    QVERIFY(opened.wait(30000));
    doc = c.document();
    QCOMPARE(dim_of(doc->graph(), input, 1), int64_t(64));
    QCOMPARE(doc->model.assumed_dims.size(), std::size_t(1));  // batch only
    const fx::FusionGroup* g = doc->plan.find(accepted);
    QVERIFY(g);  // the same group (ids come from member names) ...
    QCOMPARE(g->status, fx::GroupStatus::Accepted);  // ... with the user's decision
    panel.show_dims(doc->model, c.settings().dims);
    QVERIFY(!panel.is_assumed("seq"));
    QCOMPARE(panel.value("seq"), int64_t(64));
  }

  // A model with assumed dims opens with the Dimensions dock in view (it shares a tab
  // with the Overview); a model without keeps the Overview in front.
  void the_window_shows_the_dims_a_model_was_read_with() {
    QTemporaryDir dir;
    MainWindow window;
    window.set_autosave_dir(dir.path());
    window.resize(1200, 800);
    window.show();
    // The tab in front of the dock area the two share.
    auto front = [&]() -> QString {
      for (auto* bar : window.findChildren<QTabBar*>())
        for (int i = 0; i < bar->count(); ++i)
          if (bar->tabText(i) == QStringLiteral("Dimensions"))
            return bar->tabText(bar->currentIndex());
      return {};
    };
    auto open = [&](const QString& path) {
      QSignalSpy opened(&window, &MainWindow::model_opened);
      window.open_model(path);
      return opened.wait(30000) || opened.count() > 0;
    };
    QVERIFY(open(t::kTinyCnn));  // static shapes
    QCOMPARE(front(), QStringLiteral("Overview"));
    QVERIFY(open(t::kTinyTransformer));  // batch and seq assumed
    QCOMPARE(front(), QStringLiteral("Dimensions"));
  }
};

QTEST_MAIN(TestDimsPanel)
#include "tst_dims_panel.moc"
