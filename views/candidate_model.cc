// SPDX-License-Identifier: Apache-2.0
#include "views/candidate_model.h"

#include <QColor>

#include "analysis/default_rule.h"

#include "views/op_style.h"

namespace fx::views {

CandidateModel::CandidateModel(QObject* parent) : QAbstractTableModel(parent) {}

void CandidateModel::set_plan(const FusionPlan* plan) {
  beginResetModel();
  plan_ = plan;
  endResetModel();
}

void CandidateModel::plan_changed() {
  if (rowCount() == 0) return;
  emit dataChanged(index(0, 0), index(rowCount() - 1, Count - 1));
}

int CandidateModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !plan_) return 0;
  return int(plan_->groups().size());
}

double CandidateModel::sort_number(int row, Column column) const {
  if (!plan_ || row < 0 || row >= rowCount()) return 0;
  const GroupEstimate& e = plan_->groups()[std::size_t(row)].estimate;
  switch (column) {
    case BytesSaved: return e.known ? double(e.bytes_saved()) : -1.0;
    case TrafficCut: return e.known ? e.traffic_reduction() : -1.0;
    case LaunchesSaved: return double(e.launches_saved());
    case TimeSaved: return e.known ? e.time_saved_s() : -1.0;
    default: return 0;
  }
}

int CandidateModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : Count;
}

QVariant CandidateModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !plan_ || index.row() >= rowCount()) return {};
  const FusionGroup& g = plan_->groups()[std::size_t(index.row())];
  const GroupEstimate& e = g.estimate;
  switch (role) {
    case PlanIndexRole: return index.row();
    case GroupIdRole: return QString::fromStdString(g.id);
    case BenefitRole: return e.traffic_reduction();
    case Qt::ToolTipRole:
      // The estimate says which model produced it (a calibrated saving model or the
      // difference of kernel times).
      if ((index.column() == TimeSaved || index.column() == EstimatedBy) && e.known)
        return tr("Estimated by the %1 on %2")
            .arg(QString::fromStdString(e.saving_label()), QString::fromStdString(e.profile));
      {
        // A group legal only at an assumed dimension says so on every cell.
        QStringList tip;
        if (!g.reason.empty()) tip << QString::fromStdString(g.reason);
        if (g.status == GroupStatus::Candidate) {
          const std::string why = default_rejection(e);
          if (!why.empty())
            tip << tr("Not in the default plan: %1").arg(QString::fromStdString(why));
        }
        if (!g.assumed_note.empty())
          tip << tr("Note: %1").arg(QString::fromStdString(g.assumed_note));
        return tip.isEmpty() ? QVariant() : QVariant(tip.join(QLatin1Char('\n')));
      }
    case Qt::TextAlignmentRole:
      if (index.column() >= BytesSaved && index.column() <= TimeSaved)
        return int(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Qt::ForegroundRole:
      if (index.column() == Status) return status_color(g.status).darker(120);
      return {};
    case Qt::DisplayRole:
    case SortRole: {
      const bool sort = role == SortRole;
      switch (Column(index.column())) {
        case Group: return QString::fromStdString(g.id);
        case Label: return group_label(g);
        case Pattern: return QString::fromStdString(g.pattern);
        case Ops: {
          QStringList ops;
          for (const auto& op : g.ops) ops << QString::fromStdString(op);
          return ops.join(QLatin1Char('+'));
        }
        case BytesSaved:
          if (!e.known) return sort ? QVariant(-1.0) : QVariant(tr("unknown"));
          return sort ? QVariant(double(e.bytes_saved()))
                      : QVariant(format_bytes(double(e.bytes_saved())));
        case TrafficCut:
          if (!e.known) return sort ? QVariant(-1.0) : QVariant(tr("unknown"));
          return sort ? QVariant(e.traffic_reduction())
                      : QVariant(QString::number(e.traffic_reduction() * 100, 'f', 0) +
                                 QStringLiteral(" %"));
        case LaunchesSaved: return e.launches_saved();
        case TimeSaved:
          if (!e.known) return sort ? QVariant(-1.0) : QVariant(tr("unknown"));
          if (sort) return QVariant(e.time_saved_s());
          // The interval from calibration's residuals (analysis/estimate_interval.h).
          if (e.interval_known())
            return QString::fromUtf8("%1 \u00b1 %2%3")
                .arg(format_seconds(e.time_saved_s()), format_seconds(e.interval_half_s()),
                     e.uncertain() ? tr(" (uncertain)") : QString());
          return QVariant(format_seconds(e.time_saved_s()));
        case EstimatedBy:
          // Short: which model made the estimate, visible without a tooltip so that a
          // table mixing calibrated and uncalibrated estimates reads as such.
          return e.saving_from_model() ? tr("saving model (fitted)") : tr("kernel times");
        case Status: return QString::fromLatin1(group_status_name(g.status));
        case Count: break;
      }
      return {};
    }
    default: return {};
  }
}

QVariant CandidateModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) return column_tooltip(Column(section));
  if (role != Qt::DisplayRole) return {};
  switch (Column(section)) {
    case Group: return tr("Group");
    case Label: return tr("Label");
    case TrafficCut: return tr("Traffic cut");
    case Pattern: return tr("Pattern");
    case Ops: return tr("Ops");
    case BytesSaved: return tr("Bytes saved");
    case LaunchesSaved: return tr("Launches saved");
    case TimeSaved: return tr("Est. time saved");
    case EstimatedBy: return tr("Estimated by");
    case Status: return tr("Status");
    case Count: break;
  }
  return {};
}

QString CandidateModel::column_tooltip(Column c) {
  switch (c) {
    case Group: return tr("Stable id of the group, derived from its member node names");
    case Label: return tr("The group's pattern and its first node");
    case Pattern: return tr("The fusion rule that formed the group (see Help > Glossary)");
    case Ops: return tr("Member op types, in order");
    case BytesSaved: return tr("Memory traffic the fused kernel no longer moves (estimate)");
    case TrafficCut:
      return tr(
          "Share of the members' memory traffic the group removes; \"Accept all ≥\" "
          "compares with this column");
    case LaunchesSaved: return tr("Kernel launches the fused kernel removes (estimate)");
    case TimeSaved: return tr("Time the group is estimated to save on the chosen device");
    case EstimatedBy: return tr("Which model made the estimate");
    case Status: return tr("Your decision: candidate, accepted or rejected");
    case Count: break;
  }
  return {};
}

CandidateProxy::CandidateProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(CandidateModel::SortRole);
  setFilterCaseSensitivity(Qt::CaseInsensitive);
  setFilterKeyColumn(-1);  // any column
  setDynamicSortFilter(true);
}

void CandidateProxy::set_status_filter(std::optional<GroupStatus> status) {
  status_ = status;
  invalidateFilter();
}

bool CandidateProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const auto* model = qobject_cast<const CandidateModel*>(sourceModel());
  const int c = left.column();
  if (model && sortRole() == CandidateModel::SortRole &&
      (c == CandidateModel::BytesSaved || c == CandidateModel::TrafficCut ||
       c == CandidateModel::LaunchesSaved || c == CandidateModel::TimeSaved))
    return model->sort_number(left.row(), CandidateModel::Column(c)) <
           model->sort_number(right.row(), CandidateModel::Column(c));
  return QSortFilterProxyModel::lessThan(left, right);
}

bool CandidateProxy::filterAcceptsRow(int row, const QModelIndex& parent) const {
  if (status_) {
    const QString s = sourceModel()->index(row, CandidateModel::Status, parent).data().toString();
    if (s != QString::fromLatin1(group_status_name(*status_))) return false;
  }
  return QSortFilterProxyModel::filterAcceptsRow(row, parent);
}

}  // namespace fx::views
