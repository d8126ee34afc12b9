// SPDX-License-Identifier: Apache-2.0
#include "views/group_result_model.h"

#include "views/estimate_check.h"

#include <QBrush>
#include <QColor>

#include <cmath>

#include "views/timeline_view.h"

namespace fx::views {
namespace {

QString us_text(double us) {
  return std::isnan(us) ? QStringLiteral("–") : QString::number(us, 'f', 1);
}

}  // namespace

GroupResultModel::GroupResultModel(QObject* parent) : QAbstractTableModel(parent) {}

void GroupResultModel::set_groups(std::vector<MeasuredGroup> groups) {
  beginResetModel();
  groups_ = std::move(groups);
  endResetModel();
}

int GroupResultModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(groups_.size());
}

int GroupResultModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : Count;
}

QVariant GroupResultModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const MeasuredGroup& g = groups_[std::size_t(index.row())];
  const auto s = [](const std::string& v) { return QString::fromStdString(v); };
  if (role == kGroupIndexRole) return index.row();
  if (role == Qt::DisplayRole || role == kSortRole) {
    const bool sort = role == kSortRole;
    switch (index.column()) {
      case Id: return s(g.id);
      case Pattern: return s(g.pattern);
      case Status: return s(g.status);
      case Backend: return s(g.backend);
      case Predicted: return sort ? QVariant(g.predicted_saved_us) : us_text(g.predicted_saved_us);
      case Measured:
        if (sort) return QVariant(g.measured_saved_us);
        // The flag is text as well as colour: it survives a copy and a colour-blind reader.
        return measured_outside_estimate(g) ? QStringLiteral("⚠ ") + us_text(g.measured_saved_us)
                                            : us_text(g.measured_saved_us);
      case MaxAbsError:
        return sort ? QVariant(g.max_abs_error)
                    : (std::isnan(g.max_abs_error) ? QStringLiteral("–")
                                                   : QString::number(g.max_abs_error, 'g', 3));
      case Reason: return s(g.reason);
    }
    return {};
  }
  if (role == Qt::TextAlignmentRole && index.column() >= Predicted && index.column() <= MaxAbsError)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::DecorationRole && index.column() == Id && g.status != "excluded")
    return group_color(index.row());
  if (role == Qt::ForegroundRole && g.status == "excluded") return QBrush(QColor(190, 40, 40));
  if (role == Qt::ForegroundRole && index.column() == Measured && measured_outside_estimate(g))
    return QBrush(QColor(190, 90, 0));
  if (role == Qt::ToolTipRole && index.column() == Measured && measured_outside_estimate(g))
    return estimate_check_text(g);
  if (role == Qt::ToolTipRole && !g.reason.empty()) return s(g.reason);
  return {};
}

QVariant GroupResultModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= Count) return {};
  static const char* const names[] = {"Group",        "Pattern",     "Status",        "Backend",
                                      "Predicted µs", "Measured µs", "Max abs error", "Note"};
  return tr(names[section]);
}

}  // namespace fx::views
