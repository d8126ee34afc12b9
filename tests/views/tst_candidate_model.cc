// SPDX-License-Identifier: Apache-2.0
// CandidateModel and its proxy over a real FusionPlan: structure (through
// QAbstractItemModelTester), numeric sorting, status filtering, and refresh after
// the plan's own accept/undo.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "analysis/fusion_plan.h"
#include "views/candidate_model.h"

using namespace fx;
using fx::views::CandidateModel;
using fx::views::CandidateProxy;

namespace {

FusionGroup make_group(const std::string& id, std::vector<std::string> ops, int64_t before,
                       int64_t after, double t_before, double t_after) {
  FusionGroup g;
  g.id = id;
  g.pattern = "test";
  g.ops = ops;
  for (std::size_t i = 0; i < ops.size(); ++i) g.nodes.push_back(id + "_n" + std::to_string(i));
  g.estimate.bytes_before = before;
  g.estimate.bytes_after = after;
  g.estimate.launches_before = int(ops.size());
  g.estimate.launches_after = 1;
  g.estimate.time_before_s = t_before;
  g.estimate.time_after_s = t_after;
  g.estimate.profile = "nvidia-h100";
  return g;
}

AnalysisResult three_groups() {
  AnalysisResult r;
  r.device = "nvidia-h100";
  // Bytes saved: 879 KiB, 1.14 MiB, 50 B: text order differs from numeric order.
  r.groups.push_back(make_group("fg-a", {"Conv", "Relu"}, 1'000'000, 100'000, 3e-5, 1e-5));
  r.groups.push_back(make_group("fg-b", {"MatMul", "Add", "Gelu"}, 1'500'000, 300'000, 5e-5, 2e-5));
  r.groups.push_back(make_group("fg-c", {"Add", "Relu"}, 100, 50, 2e-6, 1.5e-6));
  return r;
}

}  // namespace

class TestCandidateModel : public QObject {
  Q_OBJECT
 private slots:
  void structure_and_text() {
    FusionPlan plan(three_groups(), "m.onnx");
    CandidateModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_plan(&plan);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(CandidateModel::Count));
    QCOMPARE(model.index(1, CandidateModel::Ops).data().toString(),
             QStringLiteral("MatMul+Add+Gelu"));
    QCOMPARE(model.index(1, CandidateModel::BytesSaved).data().toString(),
             QStringLiteral("1.14 MiB"));  // IEC, as the reports write it
    // A label a reader recognises beside the id, and the share "Accept all ≥" compares with.
    QCOMPARE(model.index(1, CandidateModel::Label).data().toString(),
             QStringLiteral("test at fg-b_n0"));
    QCOMPARE(model.index(1, CandidateModel::TrafficCut).data().toString(), QStringLiteral("80 %"));
    QVERIFY(!model.headerData(CandidateModel::TrafficCut, Qt::Horizontal, Qt::ToolTipRole)
                 .toString()
                 .isEmpty());
    QCOMPARE(model.index(0, CandidateModel::LaunchesSaved).data().toInt(), 1);
    QCOMPARE(model.index(2, CandidateModel::Status).data().toString(), QStringLiteral("candidate"));
    model.set_plan(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void time_saved_says_which_model_estimated_it() {
    AnalysisResult r = three_groups();
    // fg-a estimated by a calibrated saving model; the others by the difference of times.
    r.groups[0].estimate.model_saved_s = 4e-5;
    r.groups[0].estimate.saving_source = "saving model (class conv, fitted to 12 groups; test)";
    FusionPlan plan(r, "m.onnx");
    CandidateModel model;
    model.set_plan(&plan);
    QCOMPARE(model.index(0, CandidateModel::TimeSaved).data(CandidateModel::SortRole).toDouble(),
             4e-5);
    const QString on =
        QStringLiteral(" on ") + QString::fromStdString(r.groups[0].estimate.profile);
    QCOMPARE(
        model.index(0, CandidateModel::TimeSaved).data(Qt::ToolTipRole).toString(),
        QStringLiteral("Estimated by the saving model (class conv, fitted to 12 groups; test)") +
            on);
    // The model is named in the table itself, not only in the tooltip.
    QCOMPARE(model.index(0, CandidateModel::EstimatedBy).data().toString(),
             QStringLiteral("saving model (fitted)"));
    QCOMPARE(model.index(1, CandidateModel::EstimatedBy).data().toString(),
             QStringLiteral("kernel times"));
    QCOMPARE(
        model.headerData(CandidateModel::EstimatedBy, Qt::Horizontal, Qt::DisplayRole).toString(),
        QStringLiteral("Estimated by"));
    QCOMPARE(model.index(1, CandidateModel::TimeSaved).data(CandidateModel::SortRole).toDouble(),
             3e-5);
    QCOMPARE(model.index(1, CandidateModel::TimeSaved).data(Qt::ToolTipRole).toString(),
             QStringLiteral("Estimated by the difference of kernel times") + on);
  }

  void proxy_sorts_by_number_and_filters() {
    FusionPlan plan(three_groups(), "m.onnx");
    CandidateModel model;
    model.set_plan(&plan);
    CandidateProxy proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.sort(CandidateModel::BytesSaved, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, CandidateModel::Group).data().toString(), QStringLiteral("fg-b"));
    QCOMPARE(proxy.index(1, CandidateModel::Group).data().toString(), QStringLiteral("fg-a"));
    QCOMPARE(proxy.index(2, CandidateModel::Group).data().toString(), QStringLiteral("fg-c"));
    proxy.setFilterFixedString(QStringLiteral("matmul"));
    QCOMPARE(proxy.rowCount(), 1);
    proxy.setFilterFixedString(QString());
    plan.accept("fg-c");
    model.plan_changed();
    proxy.set_status_filter(GroupStatus::Accepted);
    QCOMPARE(proxy.rowCount(), 1);
    QCOMPARE(proxy.index(0, CandidateModel::Group).data().toString(), QStringLiteral("fg-c"));
    proxy.set_status_filter(std::nullopt);
    QCOMPARE(proxy.rowCount(), 3);
  }

  void follows_plan_decisions_and_undo() {
    FusionPlan plan(three_groups(), "m.onnx");
    CandidateModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_plan(&plan);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    const int accepted = plan.accept_all_above(0.6);  // fg-a (90%) and fg-b (80%), not fg-c (50%)
    model.plan_changed();
    QCOMPARE(accepted, 2);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(0, CandidateModel::Status).data().toString(), QStringLiteral("accepted"));
    QCOMPARE(model.index(2, CandidateModel::Status).data().toString(), QStringLiteral("candidate"));
    QVERIFY(plan.undo());
    model.plan_changed();
    QCOMPARE(model.index(0, CandidateModel::Status).data().toString(), QStringLiteral("candidate"));
  }
};

QTEST_MAIN(TestCandidateModel)
#include "tst_candidate_model.moc"
