// SPDX-License-Identifier: Apache-2.0
#pragma once
// The user's fusion plan, without a window: accept/reject/reset decisions go to
// FusionPlan (which owns undo/redo), plan files are saved and loaded, and a modified
// plan is autosaved to one file per model so that a crash loses little. The window
// listens to `changed` to repaint the table, hulls and fused graph, and to
// `modified_changed` for its title.
//
// A new analysis (another device or opt level) replaces the plan: plan_replaced() then
// forgets the file it came from and marks it unmodified, as a fresh model does.

#include <QObject>
#include <QStringList>

#include <memory>

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
  bool undo();
  bool redo();
  bool can_undo() const;
  bool can_redo() const;

  bool save(const QString& path);
  bool load(const QString& path);  // the plan bound to this model's graph
  // One file per model path, so that two models never overwrite each other's plan.
  QString autosave_path() const;
  void autosave();  // when modified
  bool restore_autosave();

  // The analysis wrote a new plan into the document: no file, not modified.
  void plan_replaced();

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

 private:
  void set_modified(bool modified);
  void decided(bool any);

  std::shared_ptr<ModelDocument> doc_;
  QString plan_path_;
  QString autosave_dir_;
  bool modified_ = false;
  QTimer* autosave_timer_;
};

}  // namespace fx::views
