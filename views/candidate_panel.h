// SPDX-License-Identifier: Apache-2.0
#pragma once
// The candidate review dock: a sortable, filterable table of fusion groups with
// accept / reject / reset, and "accept all at or above N% traffic reduction". The
// panel only asks; the window applies the decision to the plan.

#include <QWidget>

#include "views/candidate_model.h"

class QTableView;
class QLineEdit;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;

namespace fx::views {

class CandidatePanel : public QWidget {
  Q_OBJECT
 public:
  explicit CandidatePanel(CandidateModel* model, QWidget* parent = nullptr);

  // Selects the row of a plan group without emitting group_activated; -1 clears.
  void select_plan_group(int plan_index);
  QStringList selected_ids() const;
  QTableView* table() const { return table_; }
  CandidateProxy* proxy() const { return proxy_; }
  void set_summary(const QString& text);
  // Why the plan has no groups (opt level 0, no analysis, unknown shapes, ...): shown in
  // place of an empty table. Rows hidden by the filters get their own note with a clear.
  void set_empty_reason(const QString& text);
  QString empty_note() const;  // the note shown now, or empty when rows are visible
  // Filter text and status back to "all" (a new model must not open half hidden).
  void reset_filters();

 signals:
  void group_activated(int plan_index);
  void accept_requested(const QStringList& ids);
  void reject_requested(const QStringList& ids);
  void reset_requested(const QStringList& ids);
  void accept_above_requested(double threshold);

 private:
  void on_current_changed();
  void update_empty_note();
  CandidateModel* model_;
  CandidateProxy* proxy_;
  QTableView* table_;
  QLineEdit* filter_;
  QComboBox* status_;
  QDoubleSpinBox* threshold_;
  QLabel* summary_;
  QLabel* empty_;
  QPushButton* clear_filters_;
  QString empty_reason_;
  bool selecting_ = false;
};

}  // namespace fx::views
