// SPDX-License-Identifier: Apache-2.0
// ProfileController without a window: the real fxc (FX_FXC_PATH) profiles tiny_cnn with
// every group accepted and the result is read; a program that does not exist is a clear
// error; a result file is loaded, a missing one reported.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "document_fixture.h"
#include "views/before_after_result.h"
#include "views/plan_controller.h"
#include "views/profile_controller.h"

using fx::views::ProfileController;
namespace t = fx::views::test;

class TestProfileController : public QObject {
  Q_OBJECT
 private slots:
  void a_bad_program_is_a_clear_error() {
    auto doc = t::analysed_document();
    ProfileController p;
    p.set_program(QStringLiteral("/nonexistent/dir/fxc"));
    QSignalSpy failed(&p, &ProfileController::failed);
    QSignalSpy finished(&p, &ProfileController::finished);
    p.start(*doc);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QCOMPARE(finished.front().front().toBool(), false);
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.front().at(1).toString().contains(QStringLiteral("/nonexistent/dir/fxc")),
             qPrintable(failed.front().at(1).toString()));
    QVERIFY(!p.running());
    QVERIFY(p.result_json().isEmpty());
  }

  // The child reads the model as the window did: the dims the user bound, and every
  // canonical pass once the explorer read the model with shapes (before that it has not
  // folded shape arithmetic, and the child is told to leave it too). BN is folded in both.
  void the_child_gets_the_bound_dims_and_pass_options() {
    auto doc = t::analysed_document(t::kTinyTransformer);
    doc->settings.dims = {{"seq", 64}, {"batch", 2}};
    const QStringList args = fx::views::profile_arguments(
        *doc, QStringLiteral("p.json"), QStringLiteral("b.json"), QStringLiteral("a.json"));
    QCOMPARE(args.mid(0, 4), (QStringList{QStringLiteral("profile"), t::kTinyTransformer,
                                          QStringLiteral("--plan"), QStringLiteral("p.json")}));
    auto after = [&](const QString& flag) {
      QStringList values;
      for (qsizetype i = 0; i + 1 < args.size(); ++i)
        if (args[i] == flag) values << args[i + 1];
      return values;
    };
    QCOMPARE(after(QStringLiteral("--dim")),
             (QStringList{QStringLiteral("batch=2"), QStringLiteral("seq=64")}));
    QVERIFY(after(QStringLiteral("--disable-pass")).isEmpty());
    QVERIFY(after(QStringLiteral("--enable-pass")).isEmpty());
    doc->shapes_folded = false;  // the first paint's graph
    QCOMPARE(fx::views::profile_arguments(*doc, QStringLiteral("p.json"), QStringLiteral("b.json"),
                                          QStringLiteral("a.json"))
                 .join(QLatin1Char(' '))
                 .count(QStringLiteral("--disable-pass shape-folding")),
             1);
    doc->shapes_folded = true;
    QVERIFY(!args.contains(QStringLiteral("--no-canonicalize")));
    // On the CPU unless a GPU profile is analysed on a machine with a GPU.
    QCOMPARE(after(QStringLiteral("--device")).size(), 1);
    QCOMPARE(fx::views::profile_run_device(QStringLiteral("cpu-host"), true),
             QStringLiteral("cpu"));
    QCOMPARE(fx::views::profile_run_device(QStringLiteral("nvidia-h100"), false),
             QStringLiteral("cpu"));
    QCOMPARE(fx::views::profile_run_device(QStringLiteral("nvidia-h100"), true),
             QStringLiteral("cuda"));

    // A pass the explorer runs as fxc does is not named; canonical form off is said as
    // such.
    fx::LoadOptions o = fx::views::explorer_load_options(doc->settings);
    QVERIFY(!fx::views::model_arguments(o).contains(QStringLiteral("conv-bn-folding")));
    o.canonical.disabled.insert("conv-bn-folding");
    QVERIFY(fx::views::model_arguments(o).contains(QStringLiteral("conv-bn-folding")));
    o.canonical.enabled = false;
    QVERIFY(fx::views::model_arguments(o).contains(QStringLiteral("--no-canonicalize")));
  }

#ifdef FX_FXC_PATH
  void runs_the_real_profiler() {
    auto doc = t::analysed_document();
    QVERIFY(!doc->plan.groups().empty());
    fx::views::PlanController plan;
    plan.set_document(doc);
    QVERIFY(plan.accept(t::group_ids(*doc)));
    ProfileController p;
    p.set_program(QStringLiteral(FX_FXC_PATH));
    int lanes_before = -1, lanes_after = -1;
    double speedup = 0;
    connect(&p, &ProfileController::result_ready, this, [&](const fx::views::BeforeAfterResult& r) {
      lanes_before = int(r.before.events.size());
      lanes_after = int(r.after.events.size());
      speedup = r.input.speedup;
    });
    QSignalSpy started(&p, &ProfileController::started);
    QSignalSpy finished(&p, &ProfileController::finished);
    QSignalSpy failed(&p, &ProfileController::failed);
    QVERIFY(p.start(*doc));
    QCOMPARE(started.count(), 1);
    QVERIFY(p.running());
    QVERIFY(!p.start(*doc));  // one at a time
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
    QVERIFY2(finished.front().front().toBool(),
             qPrintable(failed.isEmpty() ? QString() : failed.front().at(1).toString()));
    QCOMPARE(lanes_before, int(doc->graph().node_count()));
    QVERIFY(lanes_after > 0 && lanes_after < lanes_before);
    QVERIFY(speedup > 0);
    QVERIFY(!p.result_json().isEmpty());
    QCOMPARE(p.result_origin(), QStringLiteral("before_after.json"));

    // The same JSON from a file; a new model forgets it.
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("result.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(p.result_json());
    f.close();
    ProfileController q;
    QSignalSpy ready(&q, &ProfileController::result_ready);
    QVERIFY(q.load_result(file));
    QCOMPARE(ready.count(), 1);
    QCOMPARE(q.result_origin(), file);
    q.clear();
    QVERIFY(q.result_json().isEmpty());
    QSignalSpy qfailed(&q, &ProfileController::failed);
    QVERIFY(!q.load_result(dir.filePath(QStringLiteral("missing.json"))));
    QVERIFY(qfailed.front().at(1).toString().contains(QStringLiteral("missing.json")));
  }
#endif

  void cancel_stops_the_child() {
    QTemporaryDir dir;
    const QString stub = dir.filePath(QStringLiteral("slow.sh"));
    QFile f(stub);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\nexec sleep 60\n");
    f.close();
    f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
    auto doc = t::analysed_document();
    ProfileController p;
    p.set_program(stub);
    QSignalSpy cancelled(&p, &ProfileController::cancelled);
    QSignalSpy finished(&p, &ProfileController::finished);
    QVERIFY(p.start(*doc));
    QTRY_VERIFY(p.running());
    p.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(finished.front().front().toBool(), false);
    QVERIFY(!p.running());
  }
};

QTEST_MAIN(TestProfileController)
#include "tst_profile_controller.moc"
