// SPDX-License-Identifier: Apache-2.0
#include "views/learn_from_result.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>

#include <cmath>

#include "calibration/host_device.h"
#include "calibration/learn.h"
#include "device/device_presets.h"
#include "util/error.h"

namespace fx::views {
namespace {

QString tr(const char* s) {
  return QCoreApplication::translate("LearnFromResult", s);
}
QString percent(double v) {
  return std::isfinite(v) ? QString::number(100 * v, 'f', 0) + QLatin1Char('%')
                          : QStringLiteral("-");
}
QString rho(double v) {
  return std::isfinite(v) ? QString::number(v, 'f', 2) : QStringLiteral("-");
}

}  // namespace

QString learn_summary(int groups, double before_err, double after_err, double before_rho,
                      double after_rho) {
  return tr("median error %1 before the update, %2 after (Spearman %3 -> %4, %5 groups)")
      .arg(percent(before_err), percent(after_err), rho(before_rho), rho(after_rho))
      .arg(groups);
}

LearnReport learn_from_result(const QByteArray& result_json) {
  LearnReport r;
  if (result_json.isEmpty()) {
    r.text = tr("Profile the model first: there is no before/after result to learn from.");
    return r;
  }
  try {
    // Kept under the learned folder by the time it is fitted; named by the time of day so
    // that each fold-in adds a result instead of replacing the last.
    const QString dir = QString::fromStdString(learned_results_dir());
    QDir().mkpath(dir);
    const QString path =
        dir + QStringLiteral("/gui-") +
        QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")) +
        QStringLiteral(".json");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(result_json) != result_json.size())
      throw FileError(path.toStdString(), "cannot keep the result to learn from");
    f.close();
    LearnOptions o;
    o.results = {path.toStdString()};
    o.grid_dir = grid_results_dir();
    o.learned_dir = learned_results_dir();
    o.cached = load_device_profile(cpu_host_cache_path());
    o.date = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyy-MM-dd")).toStdString();
    const LearnOutcome l = learn_from_results(o);
    save_device_profile(l.profile, cpu_host_cache_path());
    r.ok = true;
    r.text =
        tr("Folded into this CPU's calibration (%1 learned results). Estimate error on "
           "the groups just measured: %2. The \"after\" figure is on groups the update "
           "was fitted to. Delete %3 to forget.")
            .arg(l.learned_results)
            .arg(learn_summary(l.after.groups, l.before.median_abs_rel_error,
                               l.after.median_abs_rel_error, l.before.spearman, l.after.spearman),
                 dir);
  } catch (const std::exception& e) {
    r.text = tr("Nothing learned: %1").arg(QString::fromUtf8(e.what()));
  }
  return r;
}

}  // namespace fx::views
