// SPDX-License-Identifier: Apache-2.0
#include "views/plan_controller.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QStandardPaths>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "analysis/plan_totals.h"
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
  kept_.clear();
  forget_steps();
  plan_path_.clear();
  set_modified(false);
  emit changed(true);
}

void PlanController::set_modified(bool modified) {
  const bool was = modified_;
  modified_ = modified;
  if (was != modified) emit modified_changed(modified);
}

void PlanController::forget_steps() {
  undo_steps_.clear();
  redo_steps_.clear();
}

void PlanController::decided(int steps) {
  if (steps <= 0) return;
  undo_steps_.push_back(steps);
  redo_steps_.clear();
  set_modified(true);
  autosave();  // the latest state, always: a restore must never bring back an older one
  emit changed(true);
}

bool PlanController::accept(const QStringList& ids) {
  if (!doc_) return false;
  int steps = 0;
  for (const QString& id : ids) steps += doc_->plan.accept(id.toStdString(), "accepted in the GUI");
  decided(steps);
  return steps > 0;
}

bool PlanController::reject(const QStringList& ids) {
  if (!doc_) return false;
  int steps = 0;
  for (const QString& id : ids) steps += doc_->plan.reject(id.toStdString(), "rejected in the GUI");
  decided(steps);
  return steps > 0;
}

bool PlanController::reset(const QStringList& ids) {
  if (!doc_) return false;
  int steps = 0;
  for (const QString& id : ids) steps += doc_->plan.reset(id.toStdString());
  decided(steps);
  return steps > 0;
}

int PlanController::accept_above(double threshold) {
  if (!doc_) return 0;
  const int n = doc_->plan.accept_all_above(threshold);
  QString text =
      tr("Accepted %1 groups at or above %2% traffic reduction").arg(n).arg(threshold * 100);
  // The rest at or above the threshold are left out by the never-fuse-at-a-loss rule:
  // say so, or the user sees groups over the threshold still marked candidate.
  if (const int left = doc_->plan.candidates_left_above(threshold); left > 0)
    text += tr("; %1 more stay candidates: their estimated saving is not clearly positive "
               "(hover the Status cell for the range)")
                .arg(left);
  emit message(text, 10000);
  decided(n > 0 ? 1 : 0);  // FusionPlan records it as one change
  return n;
}

int PlanController::reject_measured_slower(const std::vector<MeasuredGroup>& measured) {
  if (!doc_) return 0;
  int steps = 0;
  for (const MeasuredGroup& m : measured) {
    if (!(m.measured_saved_us < 0)) continue;  // NaN (not measured) is no evidence
    const FusionGroup* g = doc_->plan.find(m.id);
    if (!g || g->status == GroupStatus::Rejected) continue;
    steps += doc_->plan.reject(m.id, QStringLiteral("rejected: measured %1 slower fused")
                                         .arg(format_seconds(-m.measured_saved_us * 1e-6))
                                         .toStdString());
  }
  emit message(steps > 0 ? tr("Rejected %1 groups that measured slower fused (Undo takes them "
                              "back)")
                               .arg(steps)
                         : tr("No group of the plan measured slower fused"),
               8000);
  decided(steps);
  return steps;
}

bool PlanController::undo() {
  if (!doc_ || undo_steps_.empty()) return false;
  const int steps = undo_steps_.back();
  undo_steps_.pop_back();
  for (int i = 0; i < steps; ++i) doc_->plan.undo();
  redo_steps_.push_back(steps);
  set_modified(true);
  autosave();
  emit changed(true);
  return true;
}

bool PlanController::redo() {
  if (!doc_ || redo_steps_.empty()) return false;
  const int steps = redo_steps_.back();
  redo_steps_.pop_back();
  for (int i = 0; i < steps; ++i) doc_->plan.redo();
  undo_steps_.push_back(steps);
  set_modified(true);
  autosave();
  emit changed(true);
  return true;
}

bool PlanController::can_undo() const {
  return doc_ && !undo_steps_.empty() && doc_->plan.can_undo();
}

bool PlanController::can_redo() const {
  return doc_ && !redo_steps_.empty() && doc_->plan.can_redo();
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
    forget_steps();
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
  request_plan_settings();
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

QDateTime PlanController::autosave_time() const {
  const QFileInfo info(autosave_path());
  return info.exists() ? info.lastModified() : QDateTime();
}

bool PlanController::restore_autosave() {
  const QString path = autosave_path();
  if (path.isEmpty() || !QFileInfo::exists(path)) return false;
  const QDateTime when = autosave_time();
  if (!load(path)) return false;
  plan_path_.clear();  // the autosave is no place to save to
  set_modified(true);  // not saved anywhere the user chose
  emit message(tr("Restored the plan autosaved %1 (%2, opt level %3)")
                   .arg(QLocale().toString(when, QLocale::ShortFormat))
                   .arg(QString::fromStdString(doc_->plan.device()))
                   .arg(doc_->plan.opt_level()),
               10'000);
  return true;
}

void PlanController::request_plan_settings() {
  const FusionPlan& p = doc_->plan;
  const QString device = QString::fromStdString(p.device());
  if (device.isEmpty()) return;
  if (device == doc_->settings.device && p.opt_level() == doc_->settings.opt_level) return;
  AnalysisSettings s = doc_->settings;
  s.device = device;
  s.opt_level = p.opt_level();
  emit settings_requested(s);
}

void PlanController::keep_decisions() {
  if (!doc_) return;
  for (const FusionGroup& g : doc_->plan.groups()) {
    if (g.status == GroupStatus::Candidate)
      kept_.erase(g.id);  // an undone decision is no decision
    else
      kept_[g.id] = {g.status, g.reason};
  }
}

int PlanController::pending_decisions() const {
  if (!doc_) return 0;
  int n = 0;
  for (const auto& [id, d] : kept_) n += doc_->plan.find(id) == nullptr;
  return n;
}

void PlanController::plan_replaced() {
  int applied = 0;
  if (doc_ && !kept_.empty()) {
    // Through JSON and bind(): the decisions become the new plan's starting state, not
    // steps that undo would take back one by one.
    nlohmann::json j = doc_->plan.to_json();
    for (auto& g : j["groups"]) {
      const auto it = kept_.find(g["id"].get<std::string>());
      if (it == kept_.end()) continue;
      g["status"] = std::string(group_status_name(it->second.status));
      g["reason"] = it->second.reason;
      ++applied;
    }
    if (applied > 0) {
      FusionPlan carried = FusionPlan::from_json(j);
      carried.bind(doc_->graph());
      doc_->plan = std::move(carried);
      doc_->rebuild_node_groups();
    }
  }
  forget_steps();  // the new plan has no history
  // Carried decisions differ from any file by their estimates: save again to keep them.
  if (applied == 0) plan_path_.clear();
  set_modified(applied > 0);
  if (applied > 0 || !kept_.empty()) {
    QString text = tr("Kept %1 decisions, re-estimated for %2 at opt level %3")
                       .arg(applied)
                       .arg(QString::fromStdString(doc_->plan.device()))
                       .arg(doc_->plan.opt_level());
    if (const int pending = pending_decisions(); pending > 0)
      text += tr("; %1 more are for groups this opt level does not form").arg(pending);
    emit message(text, 10'000);
  }
  emit changed(applied > 0);  // without decisions the table was just reset
}

QString PlanController::summary() const {
  if (!doc_) return {};
  int rejected = 0;
  for (const FusionGroup& g : doc_->plan.groups()) rejected += g.status == GroupStatus::Rejected;
  // The same totals as the status bar, the fused view and the reports (plan_totals.h).
  const PlanTotals t = plan_totals(doc_->analysis ? *doc_->analysis : AnalysisResult{}, doc_->plan);
  return tr("%1 accepted · %2 rejected · saves %3, %4")
      .arg(t.accepted)
      .arg(rejected)
      .arg(format_bytes(double(t.bytes_before - t.bytes_after)))
      .arg(format_seconds(t.time_before_s - t.time_after_s));
}

}  // namespace fx::views
