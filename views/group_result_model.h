// SPDX-License-Identifier: Apache-2.0
#pragma once
// The measured fusion groups of a before/after profile as a table: id, pattern,
// status, backend, predicted and measured saving, max abs error, and the profiler's
// note (how it was fused, or why it fell back or was excluded). Numbers sort by value
// (Qt::UserRole).

#include <QAbstractTableModel>

#include <vector>

#include "report/profile_input.h"

namespace fx::views {

class GroupResultModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Id, Pattern, Status, Backend, Predicted, Measured, MaxAbsError, Reason, Count };
  static constexpr int kSortRole = Qt::UserRole;
  static constexpr int kGroupIndexRole = Qt::UserRole + 1;  // index into the result's groups

  explicit GroupResultModel(QObject* parent = nullptr);
  void set_groups(std::vector<MeasuredGroup> groups);
  const MeasuredGroup& group(int row) const { return groups_[std::size_t(row)]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::vector<MeasuredGroup> groups_;
};

}  // namespace fx::views
