// SPDX-License-Identifier: Apache-2.0
// PlanController without a window: decisions, undo/redo, save/load, autosave and its
// restore, and the plan replaced by a new analysis.
#include <cmath>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "document_fixture.h"
#include "views/candidate_model.h"
#include "views/plan_controller.h"

using fx::views::PlanController;
namespace t = fx::views::test;

namespace {

QString status_of(const fx::views::ModelDocument& doc, const QString& id) {
  for (const auto& g : doc.plan.groups())
    if (g.id == id.toStdString())
      return QString::fromLatin1(g.status == fx::GroupStatus::Accepted   ? "accepted"
                                 : g.status == fx::GroupStatus::Rejected ? "rejected"
                                                                         : "candidate");
  return {};
}

QStringList accepted_in_file(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QStringList ids;
  for (const auto& g : QJsonDocument::fromJson(f.readAll()).object().value("groups").toArray())
    if (g.toObject().value("status").toString() == QLatin1String("accepted"))
      ids << g.toObject().value("id").toString();
  return ids;
}

}  // namespace

class TestPlanController : public QObject {
  Q_OBJECT
 private slots:
  void accept_undo_redo_save_load() {
    QTemporaryDir dir;
    auto doc = t::analysed_document();
    const QStringList ids = t::group_ids(*doc);
    QVERIFY(ids.size() >= 2);
    PlanController plan;
    plan.set_autosave_dir(dir.path());
    plan.set_document(doc);
    QVERIFY(!plan.is_modified());
    QVERIFY(!plan.can_undo());
    QSignalSpy modified(&plan, &PlanController::modified_changed);
    QSignalSpy changed(&plan, &PlanController::changed);

    QVERIFY(plan.accept({ids[0]}));
    QVERIFY(plan.is_modified());
    QCOMPARE(modified.count(), 1);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("accepted"));
    QVERIFY(plan.summary().startsWith(QStringLiteral("1 accepted · 0 rejected")));
    QVERIFY(!plan.accept({QStringLiteral("no-such-group")}));
    QCOMPARE(changed.count(), 1);

    QVERIFY(plan.reject({ids[1]}));
    QCOMPARE(status_of(*doc, ids[1]), QStringLiteral("rejected"));
    QVERIFY(plan.undo());
    QCOMPARE(status_of(*doc, ids[1]), QStringLiteral("candidate"));
    QVERIFY(plan.can_redo());
    QVERIFY(plan.redo());
    QCOMPARE(status_of(*doc, ids[1]), QStringLiteral("rejected"));
    QVERIFY(plan.reset({ids[1]}));
    QCOMPARE(status_of(*doc, ids[1]), QStringLiteral("candidate"));

    const QString file = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(plan.save(file));
    QVERIFY(!plan.is_modified());
    QCOMPARE(plan.plan_path(), file);
    QCOMPARE(accepted_in_file(file), QStringList{ids[0]});
    {
      // The explorer reads the model as fxc does once shapes are in (every canonical
      // pass, shape-folding included): the plan disables none, and fxc given it reads
      // the model the same way.
      QFile f(file);
      QVERIFY(f.open(QIODevice::ReadOnly));
      const QJsonArray passes = QJsonDocument::fromJson(f.readAll())
                                    .object()
                                    .value(QStringLiteral("disabled_passes"))
                                    .toArray();
      QCOMPARE(passes, QJsonArray());
    }

    QVERIFY(plan.undo());  // the reset
    QVERIFY(plan.undo());  // the reject
    QVERIFY(plan.undo());  // the accept
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("candidate"));
    QSignalSpy about(&plan, &PlanController::plan_about_to_be_replaced);
    QSignalSpy loaded(&plan, &PlanController::plan_loaded);
    QVERIFY(plan.load(file));
    QCOMPARE(about.count(), 1);
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("accepted"));
    QVERIFY(!plan.is_modified());

    QSignalSpy failed(&plan, &PlanController::failed);
    QVERIFY(!plan.load(dir.filePath(QStringLiteral("missing.json"))));
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.front().at(1).toString().contains(QStringLiteral("missing.json")));
  }

  void autosave_and_restore() {
    QTemporaryDir dir;
    auto doc = t::analysed_document();
    const QStringList ids = t::group_ids(*doc);
    {
      PlanController plan;
      plan.set_autosave_dir(dir.path());
      plan.set_document(doc);
      QVERIFY(plan.autosave_path().startsWith(dir.path()));
      QVERIFY(plan.autosave_path().contains(QStringLiteral("tiny_cnn-")));
      plan.autosave();  // not modified: nothing written
      QVERIFY(!QFile::exists(plan.autosave_path()));
      plan.set_autosave_interval_ms(20);
      QVERIFY(plan.accept({ids[0]}));
      QTRY_VERIFY(QFile::exists(plan.autosave_path()));  // by the timer
      QCOMPARE(accepted_in_file(plan.autosave_path()), QStringList{ids[0]});
    }
    // The same model opened again (a crash in between): the autosave restores it.
    auto again = t::analysed_document();
    PlanController plan;
    plan.set_autosave_dir(dir.path());
    plan.set_document(again);
    QCOMPARE(status_of(*again, ids[0]), QStringLiteral("candidate"));
    QVERIFY(plan.restore_autosave());
    QCOMPARE(status_of(*again, ids[0]), QStringLiteral("accepted"));
    // Saved for real: the crash copy goes.
    QVERIFY(plan.save(dir.filePath(QStringLiteral("saved.json"))));
    QVERIFY(!QFile::exists(plan.autosave_path()));
    QVERIFY(!plan.restore_autosave());
  }

  void a_new_device_keeps_every_decision_re_estimated() {
    auto doc = t::analysed_document();
    const QStringList ids = t::group_ids(*doc);
    QVERIFY(ids.size() >= 2);
    PlanController plan;
    QTemporaryDir dir;
    plan.set_autosave_dir(dir.path());
    plan.set_document(doc);
    QVERIFY(plan.accept({ids[0]}));
    QVERIFY(plan.reject({ids[1]}));
    // What the window does when the Device combo changes.
    fx::views::AnalysisSettings s = t::h100_settings();
    s.device = QStringLiteral("ascend-910b");
    plan.keep_decisions();
    apply_analysis(*doc, std::move(*run_analysis(doc->graph(), doc->path, s)));
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("candidate"));  // the analysis alone
    QSignalSpy changed(&plan, &PlanController::changed);
    QSignalSpy message(&plan, &PlanController::message);
    plan.plan_replaced();
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("accepted"));
    QCOMPARE(status_of(*doc, ids[1]), QStringLiteral("rejected"));
    QCOMPARE(QString::fromStdString(doc->plan.device()), QStringLiteral("ascend-910b"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.front().front().toBool(), true);  // rows changed: the table repaints
    QVERIFY(plan.is_modified());
    QVERIFY(message.front().front().toString().contains(QStringLiteral("Kept 2 decisions")));
    // Undo does not take the device change's decisions back one by one.
    QVERIFY(!plan.can_undo());
    QVERIFY(plan.summary().startsWith(QStringLiteral("1 accepted · 1 rejected")));
  }

  void an_opt_level_without_the_group_keeps_its_decision_for_later() {
    auto doc = t::analysed_document();
    const QStringList ids = t::group_ids(*doc);
    PlanController plan;
    QTemporaryDir dir;
    plan.set_autosave_dir(dir.path());
    plan.set_document(doc);
    QVERIFY(plan.accept({ids[0]}));
    fx::views::AnalysisSettings s = t::h100_settings();
    s.opt_level = 0;  // no groups at all
    plan.keep_decisions();
    apply_analysis(*doc, std::move(*run_analysis(doc->graph(), doc->path, s)));
    plan.plan_replaced();
    QCOMPARE(doc->plan.groups().size(), std::size_t(0));
    QCOMPARE(plan.pending_decisions(), 1);
    s.opt_level = 2;  // back: the decision returns
    plan.keep_decisions();
    apply_analysis(*doc, std::move(*run_analysis(doc->graph(), doc->path, s)));
    plan.plan_replaced();
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("accepted"));
    QCOMPARE(plan.pending_decisions(), 0);
  }

  void a_fresh_analysis_without_decisions_is_unmodified() {
    auto doc = t::analysed_document();
    PlanController plan;
    plan.set_autosave_dir(QDir::tempPath());
    plan.set_document(doc);
    fx::views::AnalysisSettings s = t::h100_settings();
    s.opt_level = 3;
    plan.keep_decisions();
    apply_analysis(*doc, std::move(*run_analysis(doc->graph(), doc->path, s)));
    QSignalSpy changed(&plan, &PlanController::changed);
    plan.plan_replaced();
    QVERIFY(!plan.is_modified());
    QVERIFY(plan.plan_path().isEmpty());
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.front().front().toBool(), false);  // the table was reset already
    QVERIFY(plan.summary().startsWith(QStringLiteral("0 accepted")));
  }

  void autosave_holds_the_latest_state_and_restores_its_device() {
    QTemporaryDir dir;
    auto doc = t::analysed_document();  // nvidia-h100
    const QStringList ids = t::group_ids(*doc);
    QVERIFY(ids.size() >= 2);
    {
      PlanController plan;
      plan.set_autosave_dir(dir.path());
      plan.set_autosave_interval_ms(3'600'000);  // the timer plays no part
      plan.set_document(doc);
      QVERIFY(plan.accept(ids));
      QCOMPARE(accepted_in_file(plan.autosave_path()).size(), ids.size());
      QVERIFY(plan.reject({ids[0]}));  // the latest state is written at once
      QCOMPARE(accepted_in_file(plan.autosave_path()).size(), ids.size() - 1);
      QVERIFY(plan.autosave_time().isValid());
    }
    // Opened again on another device: the restore asks for the device it was made for.
    fx::views::AnalysisSettings other = t::h100_settings();
    other.device = QStringLiteral("ascend-910b");
    auto again = open_document(t::kTinyCnn, other, fx::views::label_metrics(QFont()), {});
    apply_value_types(again->model, infer_value_types(again->model));
    apply_analysis(*again, std::move(*run_analysis(again->graph(), again->path, other)));
    PlanController plan;
    plan.set_autosave_dir(dir.path());
    plan.set_document(again);
    QSignalSpy requested(&plan, &PlanController::settings_requested);
    QSignalSpy message(&plan, &PlanController::message);
    QVERIFY(plan.restore_autosave());
    QCOMPARE(status_of(*again, ids[0]), QStringLiteral("rejected"));
    QCOMPARE(requested.count(), 1);
    QCOMPARE(requested.front().front().value<fx::views::AnalysisSettings>().device,
             QStringLiteral("nvidia-h100"));
    bool said_when = false;
    for (const auto& m : message)
      said_when |= m.front().toString().startsWith(QStringLiteral("Restored the plan autosaved"));
    QVERIFY(said_when);
    QVERIFY(plan.is_modified());
  }
  void accept_all_says_which_groups_the_default_rule_left_out() {
    const fx::views::AnalysisSettings settings = t::h100_settings();
    auto doc = t::analysed_document();
    auto result = run_analysis(doc->graph(), doc->path, settings, doc->model.assumed_dims, true);
    QVERIFY(result && result->analysis && result->analysis->groups.size() >= 2);
    // One group whose saving is within the estimate's own uncertainty: kept a candidate.
    fx::GroupEstimate& e = result->analysis->groups[0].estimate;
    e.saved_low_s = e.saved_high_s = NAN;  // no calibrated interval: the rule's margin applies
    e.time_after_s = e.time_before_s * 0.99;
    const std::string unclear = result->analysis->groups[0].id;
    result->plan = fx::FusionPlan(*result->analysis, doc->path.toStdString());
    apply_analysis(*doc, std::move(*result));
    PlanController plan;
    QTemporaryDir dir;
    plan.set_autosave_dir(dir.path());
    plan.set_document(doc);
    QSignalSpy message(&plan, &PlanController::message);
    QVERIFY(plan.accept_above(0.0) >= 1);
    QCOMPARE(status_of(*doc, QString::fromStdString(unclear)), QStringLiteral("candidate"));
    QVERIFY(!message.isEmpty());
    const QString said = message.back().front().toString();
    QVERIFY2(said.contains(QStringLiteral("1 more stay candidates")), qPrintable(said));
    // The row says why on hover.
    fx::views::CandidateModel model;
    model.set_plan(&doc->plan);
    int row = -1;
    for (int r = 0; r < model.rowCount(); ++r)
      if (model.data(model.index(r, 0), fx::views::CandidateModel::GroupIdRole).toString() ==
          QString::fromStdString(unclear))
        row = r;
    QVERIFY(row >= 0);
    const QString tip =
        model.data(model.index(row, fx::views::CandidateModel::Status), Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("Not in the default plan: saving not clearly positive")),
             qPrintable(tip));
  }
  void reject_what_measured_slower_in_one_undo_step() {
    auto doc = t::analysed_document();
    const QStringList ids = t::group_ids(*doc);
    QVERIFY(ids.size() >= 3);
    PlanController plan;
    QTemporaryDir dir;
    plan.set_autosave_dir(dir.path());
    plan.set_document(doc);
    QVERIFY(plan.accept(ids));
    std::vector<fx::MeasuredGroup> measured(4);
    measured[0].id = ids[0].toStdString();
    measured[0].measured_saved_us = -2900;  // slower fused
    measured[1].id = ids[1].toStdString();
    measured[1].measured_saved_us = 15;     // faster
    measured[2].id = ids[2].toStdString();  // not measured (NaN): no evidence
    measured[3].id = "fg-notinplan";
    measured[3].measured_saved_us = -1;
    QCOMPARE(plan.reject_measured_slower(measured), 1);
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("rejected"));
    QCOMPARE(status_of(*doc, ids[1]), QStringLiteral("accepted"));
    QCOMPARE(status_of(*doc, ids[2]), QStringLiteral("accepted"));
    QCOMPARE(plan.reject_measured_slower(measured), 0);  // already rejected
    QVERIFY(plan.undo());                                // the rejection, one step
    QCOMPARE(status_of(*doc, ids[0]), QStringLiteral("accepted"));
    QVERIFY(plan.undo());  // accepting all of ids was one action too
    for (const QString& id : ids) QCOMPARE(status_of(*doc, id), QStringLiteral("candidate"));
    QVERIFY(!plan.can_undo());
    QVERIFY(plan.redo());
    QCOMPARE(status_of(*doc, ids[2]), QStringLiteral("accepted"));
  }
};

QTEST_MAIN(TestPlanController)
#include "tst_plan_controller.moc"
