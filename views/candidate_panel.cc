// SPDX-License-Identifier: Apache-2.0
#include "views/candidate_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace fx::views {

CandidatePanel::CandidatePanel(CandidateModel* model, QWidget* parent)
    : QWidget(parent), model_(model), proxy_(new CandidateProxy(this)) {
  proxy_->setSourceModel(model);

  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter groups, patterns, ops…"));
  filter_->setClearButtonEnabled(true);
  status_ = new QComboBox(this);
  status_->addItems({tr("All"), tr("Candidates"), tr("Accepted"), tr("Rejected")});
  auto* accept = new QPushButton(tr("&Accept"), this);
  auto* reject = new QPushButton(tr("Re&ject"), this);
  auto* reset = new QPushButton(tr("Reset"), this);
  accept->setToolTip(tr("Accept the selected groups (A)"));
  reject->setToolTip(tr("Reject the selected groups (R)"));
  accept->setShortcut(Qt::Key_A);
  reject->setShortcut(Qt::Key_R);
  threshold_ = new QDoubleSpinBox(this);
  threshold_->setRange(0, 100);
  threshold_->setSuffix(QStringLiteral(" %"));
  threshold_->setValue(30);
  threshold_->setToolTip(
      tr("Minimum share of memory traffic a group removes (the table's \"Traffic cut\" column)"));
  auto* accept_above = new QPushButton(tr("Accept all ≥"), this);
  summary_ = new QLabel(this);

  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_, 2);
  bar->addWidget(status_);
  bar->addWidget(accept);
  bar->addWidget(reject);
  bar->addWidget(reset);
  bar->addSpacing(12);
  bar->addWidget(accept_above);
  bar->addWidget(threshold_);
  bar->addStretch(1);
  // The summary has its own line under the table: its changing width must not move the
  // buttons.
  empty_ = new QLabel(this);
  empty_->setObjectName(QStringLiteral("EmptyNote"));
  empty_->setWordWrap(true);
  clear_filters_ = new QPushButton(tr("Clear Filter"), this);
  clear_filters_->setObjectName(QStringLiteral("ClearFilterButton"));
  auto* note = new QHBoxLayout;
  note->addWidget(empty_, 1);
  note->addWidget(clear_filters_);
  summary_->setObjectName(QStringLiteral("PlanSummary"));

  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(CandidateModel::TimeSaved, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(22);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setSectionResizeMode(CandidateModel::Ops, QHeaderView::Stretch);
  // Wide enough for each header's title and the sort arrow, measured from the header text
  // alone (sizing to contents would visit every row of a big model's table).
  const QFontMetrics header_metrics(table_->horizontalHeader()->font());
  for (int c = 0; c < proxy_->columnCount(); ++c) {
    if (c == CandidateModel::Ops) continue;
    const QString title = proxy_->headerData(c, Qt::Horizontal).toString();
    int wanted = header_metrics.horizontalAdvance(title) + 28;
    // Its values are two fixed words: fit the longer one rather than cut it.
    if (c == CandidateModel::EstimatedBy)
      wanted = std::max(wanted, table_->fontMetrics().horizontalAdvance(
                                    CandidateModel::tr("saving model (fitted)")) +
                                    16);
    // The label names a node: room for a typical exporter path.
    if (c == CandidateModel::Label)
      wanted = std::max(wanted, table_->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 34);
    if (table_->horizontalHeader()->sectionSize(c) < wanted)
      table_->horizontalHeader()->resizeSection(c, wanted);
  }

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(table_);
  layout->addLayout(note);
  layout->addWidget(summary_);
  connect(clear_filters_, &QPushButton::clicked, this, &CandidatePanel::reset_filters);
  connect(filter_, &QLineEdit::textChanged, this, &CandidatePanel::update_empty_note);
  connect(status_, &QComboBox::currentIndexChanged, this, &CandidatePanel::update_empty_note);
  for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
    connect(proxy_, signal, this, &CandidatePanel::update_empty_note);
  connect(proxy_, &QAbstractItemModel::modelReset, this, &CandidatePanel::update_empty_note);
  connect(proxy_, &QAbstractItemModel::layoutChanged, this, &CandidatePanel::update_empty_note);
  update_empty_note();

  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(status_, &QComboBox::currentIndexChanged, this, [this](int i) {
    static const std::optional<GroupStatus> map[] = {std::nullopt, GroupStatus::Candidate,
                                                     GroupStatus::Accepted, GroupStatus::Rejected};
    proxy_->set_status_filter(map[std::clamp(i, 0, 3)]);
  });
  connect(accept, &QPushButton::clicked, this, [this] { emit accept_requested(selected_ids()); });
  connect(reject, &QPushButton::clicked, this, [this] { emit reject_requested(selected_ids()); });
  connect(reset, &QPushButton::clicked, this, [this] { emit reset_requested(selected_ids()); });
  connect(accept_above, &QPushButton::clicked, this,
          [this] { emit accept_above_requested(threshold_->value() / 100.0); });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &CandidatePanel::on_current_changed);
}

void CandidatePanel::set_summary(const QString& text) {
  summary_->setText(text);
}

void CandidatePanel::set_empty_reason(const QString& text) {
  empty_reason_ = text;
  update_empty_note();
}

void CandidatePanel::reset_filters() {
  filter_->clear();
  status_->setCurrentIndex(0);
  update_empty_note();
}

QString CandidatePanel::empty_note() const {
  return empty_->isVisibleTo(this) ? empty_->text() : QString();
}

void CandidatePanel::update_empty_note() {
  const int all = model_->rowCount();
  const int hidden = all - proxy_->rowCount();
  QString text;
  if (all == 0)
    text = empty_reason_.isEmpty() ? tr("No fusion groups.") : empty_reason_;
  else if (hidden > 0)
    text = tr("%1 of %2 groups hidden by the filter").arg(hidden).arg(all);
  empty_->setText(text);
  empty_->setVisible(!text.isEmpty());
  clear_filters_->setVisible(hidden > 0);
}

QStringList CandidatePanel::selected_ids() const {
  QStringList ids;
  for (const QModelIndex& i : table_->selectionModel()->selectedRows())
    ids << i.data(CandidateModel::GroupIdRole).toString();
  return ids;
}

void CandidatePanel::on_current_changed() {
  if (selecting_) return;
  const QModelIndex cur = table_->currentIndex();
  if (cur.isValid()) emit group_activated(cur.data(CandidateModel::PlanIndexRole).toInt());
}

void CandidatePanel::select_plan_group(int plan_index) {
  selecting_ = true;
  if (plan_index < 0) {
    table_->clearSelection();
  } else {
    const QModelIndex src = model_->index(plan_index, 0);
    const QModelIndex idx = proxy_->mapFromSource(src);
    if (idx.isValid()) {
      table_->selectionModel()->setCurrentIndex(
          idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
      table_->scrollTo(idx);
    }
  }
  selecting_ = false;
}

}  // namespace fx::views
