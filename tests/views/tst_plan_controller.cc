// SPDX-License-Identifier: Apache-2.0
// PlanController without a window: decisions, undo/redo, save/load, autosave and its
// restore, and the plan replaced by a new analysis.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "document_fixture.h"
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

  void a_new_analysis_replaces_the_plan() {
    auto doc = t::analysed_document();
    PlanController plan;
    plan.set_autosave_dir(QDir::tempPath());
    plan.set_document(doc);
    QTemporaryDir dir;
    QVERIFY(plan.accept({t::group_ids(*doc).front()}));
    QVERIFY(plan.save(dir.filePath(QStringLiteral("p.json"))));
    QVERIFY(plan.accept({t::group_ids(*doc).back()}));
    QVERIFY(plan.is_modified());
    // What the window does when the device changes: a new analysis, then plan_replaced.
    fx::views::AnalysisSettings s = t::h100_settings();
    s.opt_level = 3;
    apply_analysis(*doc, std::move(*run_analysis(doc->graph(), doc->path, s)));
    QSignalSpy changed(&plan, &PlanController::changed);
    plan.plan_replaced();
    QVERIFY(!plan.is_modified());
    QVERIFY(plan.plan_path().isEmpty());
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.front().front().toBool(), false);  // the table was reset already
    QVERIFY(plan.summary().startsWith(QStringLiteral("0 accepted")));
  }
};

QTEST_MAIN(TestPlanController)
#include "tst_plan_controller.moc"
