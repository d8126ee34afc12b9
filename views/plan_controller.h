// SPDX-License-Identifier: Apache-2.0
#pragma once
// The user's fusion plan, without a window: accept/reject/reset decisions go to
// FusionPlan (which owns undo/redo), plan files are saved and loaded, and a modified
// plan is autosaved to one file per model so that a crash loses little. The window
// listens to `changed` to repaint the table, hulls and fused graph, and to
// `modified_changed` for its title.
//
// A new analysis of the same model (another device or opt level) replaces the plan's
// groups and estimates but never the user's decisions: keep_decisions() before the new
// plan goes in, plan_replaced() after, and every accept/reject is re-applied to the new
// groups with the new estimates. A decision whose group does not exist at this opt level
// is remembered and comes back when the group does.
//
// Every decision is autosaved at once (a crash or a restore never finds an older state);
// the timer only retries a failed write.

#include <QDateTime>
#include <QObject>
#include <QStringList>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/profile_input.h"
#include "views/model_document.h"

class QTimer;

namespace fx::views {

class PlanController : public QObject {
  Q_OBJECT
 public:
  explicit PlanController(QObject* parent = nullptr);

  // A new model (null: none); its plan comes unmodified and without a file.
  void set_document(std::shared_ptr<ModelDocument> doc);
  void set_autosave_dir(const QString& dir) { autosave_dir_ = dir; }
  QString autosave_dir() const { return autosave_dir_; }
  void set_autosave_interval_ms(int ms);

  // Decisions by group id; each returns whether anything changed.
  bool accept(const QStringList& ids);
  bool reject(const QStringList& ids);
  bool reset(const QStringList& ids);
  int accept_above(double threshold);  // the number of groups accepted
  // Rejects every group of the plan that the profile measured slower fused than unfused
  // (a negative measured saving) and that is not rejected yet; one undo step. Returns
  // the number rejected.
  int reject_measured_slower(const std::vector<MeasuredGroup>& measured);
  // Each call above is one step of undo/redo, however many groups it decided.
  bool undo();
  bool redo();
  bool can_undo() const;
  bool can_redo() const;

  bool save(const QString& path);
  bool load(const QString& path);  // the plan bound to this model's graph
  // One file per model path, so that two models never overwrite each other's plan.
  QString autosave_path() const;
  void autosave();  // when modified
  // Loads the autosave and says when it was written; when it was made for another device
  // or opt level, asks for those (settings_requested) so that its estimates match.
  bool restore_autosave();
  QDateTime autosave_time() const;  // invalid when there is none

  // The analysis is about to replace the document's plan: remember the decisions.
  void keep_decisions();
  // The analysis wrote a new plan into the document; the kept decisions are applied to
  // it (re-estimated). Without decisions it is unmodified and has no file, like a fresh
  // model's plan.
  void plan_replaced();
  // Decisions kept across analyses but whose group the current plan lacks.
  int pending_decisions() const;

  QString plan_path() const { return plan_path_; }
  bool is_modified() const { return modified_; }
  // "N accepted · M rejected · saves X, Y" for the candidate panel.
  QString summary() const;

 signals:
  // After any change of the plan's decisions or groups; `rows_changed` false when the
  // table was already reset with this plan.
  void changed(bool rows_changed);
  void modified_changed(bool modified);
  // load() swaps the plan object's contents between these two.
  void plan_about_to_be_replaced();
  void plan_loaded();
  void failed(const QString& title, const QString& message);
  void message(const QString& text, int timeout_ms);
  // A loaded plan was made with other analysis settings: the window should switch to
  // them (and re-analyse; the decisions are kept).
  void settings_requested(const AnalysisSettings& settings);

 private:
  void set_modified(bool modified);
  // `steps` plan changes made by one user action: recorded as one undo step.
  void decided(int steps);
  void forget_steps();

  struct Decision {
    GroupStatus status;
    std::string reason;
  };
  void request_plan_settings();

  std::shared_ptr<ModelDocument> doc_;
  std::map<std::string, Decision> kept_;  // group id -> decision, across analyses
  QString plan_path_;
  QString autosave_dir_;
  bool modified_ = false;
  // FusionPlan records one change per group; these say how many make one user action.
  std::vector<int> undo_steps_, redo_steps_;
  QTimer* autosave_timer_;
};

}  // namespace fx::views
