// SPDX-License-Identifier: Apache-2.0
#include "views/plan_controller.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>

#include "util/error.h"
#include "views/op_style.h"

namespace fx::views {

PlanController::PlanController(QObject* parent)
    : QObject(parent),
      autosave_dir_(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                    QStringLiteral("/autosave")),
      autosave_timer_(new QTimer(this)) {
  autosave_timer_->setInterval(30'000);
  connect(autosave_timer_, &QTimer::timeout, this, &PlanController::autosave);
  autosave_timer_->start();
}

void PlanController::set_autosave_interval_ms(int ms) {
  autosave_timer_->setInterval(ms);
}

void PlanController::set_document(std::shared_ptr<ModelDocument> doc) {
  doc_ = std::move(doc);
  plan_path_.clear();
  set_modified(false);
  emit changed(true);
}

void PlanController::set_modified(bool modified) {
  const bool was = modified_;
  modified_ = modified;
  if (was != modified) emit modified_changed(modified);
}

void PlanController::decided(bool any) {
  if (!any) return;
  set_modified(true);
  emit changed(true);
}

bool PlanController::accept(const QStringList& ids) {
  if (!doc_) return false;
  bool any = false;
  for (const QString& id : ids) any |= doc_->plan.accept(id.toStdString(), "accepted in the GUI");
  decided(any);
  return any;
}

bool PlanController::reject(const QStringList& ids) {
  if (!doc_) return false;
  bool any = false;
  for (const QString& id : ids) any |= doc_->plan.reject(id.toStdString(), "rejected in the GUI");
  decided(any);
  return any;
}

bool PlanController::reset(const QStringList& ids) {
  if (!doc_) return false;
  bool any = false;
  for (const QString& id : ids) any |= doc_->plan.reset(id.toStdString());
  decided(any);
  return any;
}

int PlanController::accept_above(double threshold) {
  if (!doc_) return 0;
  const int n = doc_->plan.accept_all_above(threshold);
  emit message(
      tr("Accepted %1 groups at or above %2% traffic reduction").arg(n).arg(threshold * 100), 5000);
  decided(n > 0);
  return n;
}

bool PlanController::undo() {
  const bool done = doc_ && doc_->plan.undo();
  decided(done);
  return done;
}

bool PlanController::redo() {
  const bool done = doc_ && doc_->plan.redo();
  decided(done);
  return done;
}

bool PlanController::can_undo() const {
  return doc_ && doc_->plan.can_undo();
}

bool PlanController::can_redo() const {
  return doc_ && doc_->plan.can_redo();
}

bool PlanController::save(const QString& path) {
  if (!doc_) return false;
  try {
    doc_->plan.save(path.toStdString());
  } catch (const Error& e) {
    emit failed(tr("Cannot save plan"), QString::fromUtf8(e.what()));
    return false;
  }
  plan_path_ = path;
  set_modified(false);
  QFile::remove(autosave_path());  // saved for real: the crash copy is stale
  emit message(tr("Plan saved to %1").arg(path), 5000);
  return true;
}

bool PlanController::load(const QString& path) {
  if (!doc_) return false;
  try {
    FusionPlan plan = FusionPlan::load(path.toStdString());
    const auto missing = plan.bind(doc_->graph());
    emit plan_about_to_be_replaced();
    doc_->plan = std::move(plan);
    doc_->rebuild_node_groups();
    emit plan_loaded();
    if (!missing.empty())
      emit message(tr("Plan loaded; %1 groups dropped: their nodes are not in this model")
                       .arg(doc_->plan.dropped_groups().size()),
                   10'000);
  } catch (const Error& e) {
    emit failed(tr("Cannot load plan"), QString::fromUtf8(e.what()));
    return false;
  }
  plan_path_ = path;
  set_modified(false);
  emit changed(true);
  return true;
}

QString PlanController::autosave_path() const {
  if (!doc_) return {};
  const QByteArray hash =
      QCryptographicHash::hash(QFileInfo(doc_->path).absoluteFilePath().toUtf8(),
                               QCryptographicHash::Sha1)
          .toHex()
          .left(12);
  return autosave_dir_ + QLatin1Char('/') + QFileInfo(doc_->path).completeBaseName() +
         QLatin1Char('-') + QString::fromLatin1(hash) + QStringLiteral(".plan.json");
}

void PlanController::autosave() {
  if (!doc_ || !modified_) return;
  QDir().mkpath(autosave_dir_);
  try {
    doc_->plan.save(autosave_path().toStdString());
  } catch (const Error& e) {
    emit message(tr("Autosave failed: %1").arg(QString::fromUtf8(e.what())), 5000);
  }
}

bool PlanController::restore_autosave() {
  const QString path = autosave_path();
  return !path.isEmpty() && QFileInfo::exists(path) && load(path);
}

void PlanController::plan_replaced() {
  plan_path_.clear();
  set_modified(false);
  emit changed(false);  // the table was just reset
}

QString PlanController::summary() const {
  if (!doc_) return {};
  int accepted = 0, rejected = 0;
  int64_t bytes = 0;
  double time = 0;
  for (const FusionGroup& g : doc_->plan.groups()) {
    if (g.status == GroupStatus::Accepted) {
      ++accepted;
      if (g.estimate.known) bytes += g.estimate.bytes_saved(), time += g.estimate.time_saved_s();
    } else if (g.status == GroupStatus::Rejected) {
      ++rejected;
    }
  }
  return tr("%1 accepted · %2 rejected · saves %3, %4")
      .arg(accepted)
      .arg(rejected)
      .arg(format_bytes(double(bytes)))
      .arg(format_seconds(time));
}

}  // namespace fx::views
