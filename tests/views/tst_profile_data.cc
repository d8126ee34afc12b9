// SPDX-License-Identifier: Apache-2.0
// The before/after result as the views read it (lanes from traces or rows, groups
// coloured by membership, errors naming the origin), the group table (under
// QAbstractItemModelTester), the saving chart and the summary panel's numbers.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QMenu>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <memory>

#include "before_after_json.h"
#include "util/error.h"
#include "views/before_after_result.h"
#include "views/group_result_model.h"
#include "views/profile_summary.h"
#include "views/saving_chart.h"

using namespace fx;
using namespace fx::views;
using fx::testing::BeforeAfterFixture;

namespace {

QByteArray dump(const nlohmann::json& j) {
  return QByteArray::fromStdString(j.dump());
}

}  // namespace

class TestProfileData : public QObject {
  Q_OBJECT
 private slots:
  void reads_lanes_from_the_embedded_traces() {
    const BeforeAfterFixture f;
    const BeforeAfterResult r = read_before_after(dump(f.json()), QStringLiteral("fixture"));
    QVERIFY(!r.before_laid_end_to_end && !r.after_laid_end_to_end);
    QCOMPARE(int(r.before.events.size()), int(f.before.size()));
    QCOMPARE(int(r.after.events.size()), int(f.after.size()));
    QCOMPARE(r.before.kernel_time_us(0), BeforeAfterFixture::sum_us(f.before));
    QCOMPARE(r.after.kernel_time_us(0), BeforeAfterFixture::sum_us(f.after));
    // Bytes travel through the trace (the timeline's GB/s needs them).
    QCOMPARE(r.after.events[0].bytes_read, f.after[0].bytes_read);
    QCOMPARE(r.after.events[0].bytes_written, f.after[0].bytes_written);
    // Group colours: conv1/relu before and the fused kernel after are group 0; the
    // excluded group's kernels are not coloured.
    for (int i = 0; i < 2; ++i)
      QCOMPARE(r.before.events[std::size_t(i)].group_id, std::optional<int>(0));
    QCOMPARE(r.after.events[0].group_id, std::optional<int>(0));
    QVERIFY(!r.before.events[2].group_id && !r.after.events[1].group_id);
    QCOMPARE(r.group_label(0), QStringLiteral("fg-142d3ebd (conv_bn_act)"));
    QCOMPARE(int(r.input.groups.size()), 2);
    QVERIFY(std::isnan(r.input.groups[1].measured_saved_us));
  }

  void trace_files_win_over_the_embedded_traces() {
    QTemporaryDir dir;
    BeforeAfterFixture f;
    const nlohmann::json doc = f.json();
    f.after = {{"fg-142d3ebd", f.after[0].nodes, 44, 1, 2}};  // a different after
    const QString after_trace = dir.filePath(QStringLiteral("after.json"));
    write_chrome_trace(after_trace.toStdString(), f.timeline(f.after));
    const BeforeAfterResult r =
        read_before_after(dump(doc), QStringLiteral("fixture"),
                          dir.filePath(QStringLiteral("missing.json")), after_trace);
    QCOMPARE(int(r.before.events.size()), 6);  // missing file: the embedded trace
    QCOMPARE(int(r.after.events.size()), 1);
    QCOMPARE(r.after.events[0].duration_us, 44.0);
  }

  void without_traces_kernels_are_laid_end_to_end() {
    const BeforeAfterFixture f;
    const BeforeAfterResult r = read_before_after(dump(f.json(false)), QStringLiteral("fixture"));
    QVERIFY(r.before_laid_end_to_end && r.after_laid_end_to_end);
    QCOMPARE(r.before.kernel_time_us(0), BeforeAfterFixture::sum_us(f.before));
    QCOMPARE(r.before.events[1].start_us, f.before[0].us);  // no gaps
    QCOMPARE(r.before.events[1].bytes_read, f.before[1].bytes_read);
    QCOMPARE(r.after.events[0].group_id, std::optional<int>(0));
  }

  void bad_documents_are_errors_naming_the_origin() {
    const auto message = [](const QByteArray& text) {
      try {
        read_before_after(text, QStringLiteral("output of fxc"));
      } catch (const Error& e) {
        return QString::fromUtf8(e.what());
      }
      return QString();
    };
    QVERIFY(message("{ not json").startsWith(QStringLiteral("output of fxc: not JSON")));
    QVERIFY(message("").contains(QStringLiteral("no output")));
    QVERIFY(message("[1, 2]").contains(QStringLiteral("JSON object")));
    QVERIFY(message(R"({"kernels": [], "median_ms": 1})").contains(QStringLiteral("single-run")));
    QVERIFY(message(dump(BeforeAfterFixture().json())).isEmpty());
  }

  void group_model_passes_the_model_tester() {
    const BeforeAfterFixture f;
    const BeforeAfterResult r = read_before_after(dump(f.json()), QStringLiteral("fixture"));
    GroupResultModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_groups(r.input.groups);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(GroupResultModel::Count));
    QCOMPARE(model.index(0, GroupResultModel::Id).data().toString(), QStringLiteral("fg-142d3ebd"));
    QCOMPARE(
        model.index(0, GroupResultModel::Measured).data(GroupResultModel::kSortRole).toDouble(),
        f.fused_saved_us());
    QCOMPARE(model.index(0, GroupResultModel::Predicted).data().toString(),
             QString::number(BeforeAfterFixture::kPredictedFused, 'f', 1));
    QCOMPARE(model.index(1, GroupResultModel::Measured).data().toString(), QStringLiteral("–"));
    QVERIFY(model.index(1, GroupResultModel::Reason)
                .data()
                .toString()
                .contains(QStringLiteral("breaks equivalence")));
    model.set_groups({});
    QCOMPARE(model.rowCount(), 0);
  }

  void chart_draws_fused_groups_only() {
    const BeforeAfterResult r =
        read_before_after(dump(BeforeAfterFixture().json()), QStringLiteral("fixture"));
    SavingChart chart;
    chart.resize(500, 200);
    chart.set_groups(r.input.groups, QStringLiteral("cpu-host"));
    QCOMPARE(chart.bar_count(), 1);  // the excluded group is listed, not charted
    QCOMPARE(chart.group_at(QPoint(200, 38 + 5)), 0);
    QCOMPARE(chart.group_at(QPoint(200, 5)), -1);
    QImage image(chart.size(), QImage::Format_ARGB32);
    chart.render(&image);  // paints without a crash, with NaN measured values around
  }

  void summary_shows_the_fixture_numbers() {
    const BeforeAfterFixture f;
    const BeforeAfterResult r = read_before_after(dump(f.json()), QStringLiteral("fixture"));
    ProfileSummary s;
    s.set_result(r);
    QVERIFY(s.value(QStringLiteral("before_ms")).startsWith(format_ms(f.before_ms())));
    QVERIFY(s.value(QStringLiteral("after_ms")).startsWith(format_ms(f.after_ms())));
    QCOMPARE(s.value(QStringLiteral("before_kernels")), QString::number(f.before.size()));
    QCOMPARE(s.value(QStringLiteral("after_kernels")), QString::number(f.after.size()));
    QCOMPARE(s.value(QStringLiteral("speedup")), format_speedup(f.speedup()));
    QCOMPARE(s.value(QStringLiteral("max_abs_error")), QString::number(f.max_abs_error, 'g', 3));
    QCOMPARE(s.value(QStringLiteral("max_rel_error")), QString::number(f.max_rel_error, 'g', 3));
    QVERIFY(s.value(QStringLiteral("outputs_match")).contains(QStringLiteral("match")));
    // The tolerance as fxc profile reports it, its mode included.
    auto with_tol = f.json();
    with_tol["tolerance"] = {{"rtol", 1e-3}, {"atol", 1e-5}, {"mode", "scaled"}};
    ProfileSummary st;
    st.set_result(read_before_after(dump(with_tol), QStringLiteral("fixture")));
    QVERIFY2(
        st.value(QStringLiteral("outputs_match")).contains(QStringLiteral("atol 1e-05 scaled")),
        qPrintable(st.value(QStringLiteral("outputs_match"))));
    const QString excluded = s.value(QStringLiteral("excluded"));
    QVERIFY(excluded.contains(QStringLiteral("fg-1c9df8f9")));
    QVERIFY(excluded.contains(QStringLiteral("max abs error 0.31")));
    QVERIFY(!excluded.contains(QStringLiteral("fg-142d3ebd")));
    QCOMPARE(s.group_model()->rowCount(), 2);
    QCOMPARE(s.chart()->bar_count(), 1);
    // Clicking the chart's bar asks for the group's nodes.
    QSignalSpy activated(&s, &ProfileSummary::group_activated);
    s.resize(1200, 300);
    s.show();
    QTest::mouseClick(s.chart(), Qt::LeftButton, {}, QPoint(200, 38 + 5));
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.front().front().toStringList().size(), 2);  // conv1, relu
  }
  // With the calibration's interval in the result, a measurement of the right sign but
  // outside the interval is flagged too; one inside it is not.
  void measurement_outside_the_interval_is_flagged() {
    std::vector<fx::MeasuredGroup> groups(2);
    for (auto& g : groups) {
      g.status = "fused";
      g.predicted_saved_us = 280;
      g.predicted_low_us = 230;
      g.predicted_high_us = 330;
    }
    groups[0].id = "fg-far";
    groups[0].measured_saved_us = 22;
    groups[1].id = "fg-inside";
    groups[1].measured_saved_us = 250;
    GroupResultModel model;
    model.set_groups(groups);
    QVERIFY(model.index(0, GroupResultModel::Measured)
                .data()
                .toString()
                .startsWith(QStringLiteral("⚠")));
    QVERIFY(model.index(0, GroupResultModel::Measured)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("interval")));
    QVERIFY(!model.index(1, GroupResultModel::Measured)
                 .data()
                 .toString()
                 .contains(QStringLiteral("⚠")));
  }
  // A measurement the estimate did not allow is flagged in the table and the chart; the
  // chart's and the table's menus, and the button, ask to reject.
  void disagreeing_measurements_are_flagged_and_rejectable() {
    std::vector<fx::MeasuredGroup> groups(3);
    groups[0].id = "fg-slower";
    groups[0].status = "fused";
    groups[0].predicted_saved_us = 280;
    groups[0].measured_saved_us = -22;
    groups[1].id = "fg-agrees";
    groups[1].status = "fused";
    groups[1].predicted_saved_us = 30;
    groups[1].measured_saved_us = 25;
    groups[2].id = "fg-unmeasured";
    groups[2].status = "fused";
    groups[2].predicted_saved_us = 30;
    GroupResultModel model;
    model.set_groups(groups);
    QVERIFY(model.index(0, GroupResultModel::Measured)
                .data()
                .toString()
                .startsWith(QStringLiteral("⚠")));
    QVERIFY(model.index(0, GroupResultModel::Measured)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("measured")));
    QVERIFY(!model.index(1, GroupResultModel::Measured)
                 .data()
                 .toString()
                 .contains(QStringLiteral("⚠")));
    QVERIFY(!model.index(2, GroupResultModel::Measured)
                 .data()
                 .toString()
                 .contains(QStringLiteral("⚠")));
    SavingChart chart;
    chart.set_groups(groups, QStringLiteral("cpu-host"));
    QCOMPARE(chart.flagged_count(), 1);

    // Through the summary, as a real result shows it.
    const BeforeAfterFixture f;
    BeforeAfterResult r = read_before_after(dump(f.json()), QStringLiteral("fixture"));
    r.input.groups = groups;
    ProfileSummary s;
    s.set_result(r);
    QCOMPARE(s.slower_count(), 1);
    QSignalSpy one(&s, &ProfileSummary::reject_requested);
    QSignalSpy all(&s, &ProfileSummary::reject_slower_requested);
    std::unique_ptr<QMenu> menu(s.group_menu(0));
    auto* reject_one = menu->findChild<QAction*>(QStringLiteral("RejectGroupAction"));
    QVERIFY(reject_one);
    reject_one->trigger();
    QCOMPARE(one.count(), 1);
    QCOMPARE(one.front().front().toStringList(), QStringList{QStringLiteral("fg-slower")});
    auto* reject_all = menu->findChild<QAction*>(QStringLiteral("RejectSlowerAction"));
    QVERIFY(reject_all && reject_all->isEnabled());
    reject_all->trigger();
    QCOMPARE(all.count(), 1);
    auto* button = s.findChild<QPushButton*>(QStringLiteral("RejectSlowerButton"));
    QVERIFY(button && button->isEnabled());
    button->click();
    QCOMPARE(all.count(), 2);
    s.clear();
    QVERIFY(!button->isEnabled());
  }
};

QTEST_MAIN(TestProfileData)
#include "tst_profile_data.moc"
