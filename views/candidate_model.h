// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fusion candidates of a plan as a table: one row per group, in plan order.
// Display text is formatted for people; SortRole carries the raw number so that the
// proxy sorts 1.2 MB after 900 KB. The model never changes the plan: the window
// calls FusionPlan and then plan_changed().

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include "analysis/fusion_plan.h"

namespace fx::views {

class CandidateModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Group,
    Label,  // pattern at first node: what a reader recognises
    Pattern,
    Ops,
    BytesSaved,
    TrafficCut,  // the share "Accept all >=" compares with
    LaunchesSaved,
    TimeSaved,
    EstimatedBy,
    Status,
    Count
  };
  enum Role { SortRole = Qt::UserRole + 1, PlanIndexRole, GroupIdRole, BenefitRole };

  explicit CandidateModel(QObject* parent = nullptr);
  // The plan must outlive the model or be replaced first; nullptr empties the table.
  void set_plan(const FusionPlan* plan);
  // Statuses changed (accept, reject, undo): repaint every row.
  void plan_changed();
  // The number a numeric column sorts by (what SortRole holds), without a QVariant:
  // the proxy sorts tens of thousands of rows of a big model on the UI thread.
  double sort_number(int row, Column column) const;
  static QString column_tooltip(Column column);  // what the header's term means

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  const FusionPlan* plan_ = nullptr;
};

// Sorts by SortRole and filters on the group, pattern, ops and status text.
class CandidateProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit CandidateProxy(QObject* parent = nullptr);
  // Shows only rows with this status; nullopt shows all.
  void set_status_filter(std::optional<GroupStatus> status);

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  std::optional<GroupStatus> status_;
};

}  // namespace fx::views
