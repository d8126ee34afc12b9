// SPDX-License-Identifier: Apache-2.0
#pragma once
// The summary of a before/after profile beside the timeline: total time and kernel
// count before and after, speed-up, output equivalence (max abs/rel error, outputs
// match), the predicted vs measured saving per group (SavingChart), the groups
// excluded for breaking equivalence with their reason, and the group table.
// Value labels have object names (before_ms, after_ms, before_kernels, after_kernels,
// speedup, max_abs_error, max_rel_error, outputs_match, excluded) so tests read them.

#include <QWidget>

#include "views/before_after_result.h"

class QFormLayout;
class QLabel;
class QMenu;
class QPushButton;
class QTableView;
class QSortFilterProxyModel;

namespace fx::views {

class GroupResultModel;
class SavingChart;

class ProfileSummary : public QWidget {
  Q_OBJECT
 public:
  explicit ProfileSummary(QWidget* parent = nullptr);
  void set_result(const BeforeAfterResult& result);
  void clear();
  QString value(const QString& name) const;  // the text of a value label
  GroupResultModel* group_model() const { return groups_; }
  SavingChart* chart() const { return chart_; }

 signals:
  // A group picked in the chart or the table: its nodes, to select in the graph.
  void group_activated(const QStringList& nodes);
  // From the context menus of the chart and the table, and the button: reject one group
  // (by id), or every group that measured slower fused.
  void reject_requested(const QStringList& ids);
  void reject_slower_requested();

 public:
  // The context menu for a group (index into the result's groups; -1: none), as the chart
  // and the table show it. The caller owns the menu.
  QMenu* group_menu(int group);
  int slower_count() const;  // groups that measured slower fused (not excluded)

 private:
  QLabel* add_value(QFormLayout* form, const QString& label, const QString& name);
  void activate(int group);

  GroupResultModel* groups_;
  QSortFilterProxyModel* proxy_;
  SavingChart* chart_;
  QTableView* table_;
  QLabel* header_;
  QLabel *before_ms_, *after_ms_, *before_kernels_, *after_kernels_, *speedup_;
  QLabel *max_abs_, *max_rel_, *match_, *excluded_;
  QPushButton* reject_slower_;
};

// Formatting shared with the tests: "12.345 ms", "1.23×".
QString format_ms(double ms);
QString format_speedup(double ratio);

}  // namespace fx::views
