// SPDX-License-Identifier: Apache-2.0
#include "views/profile_summary.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>
#include <memory>

#include "views/group_result_model.h"
#include "views/op_style.h"
#include "views/saving_chart.h"

namespace fx::views {

QString format_ms(double ms) {
  return std::isnan(ms) ? QStringLiteral("–") : QString::number(ms, 'f', 3) + QStringLiteral(" ms");
}

QString format_speedup(double ratio) {
  return std::isnan(ratio) ? QStringLiteral("–") : QString::number(ratio, 'f', 2) + u'×';
}

namespace {

QString error_text(double e) {
  return std::isnan(e) ? QStringLiteral("–") : QString::number(e, 'g', 3);
}

}  // namespace

ProfileSummary::ProfileSummary(QWidget* parent) : QWidget(parent) {
  auto* numbers = new QWidget(this);
  auto* left = new QVBoxLayout(numbers);
  left->setContentsMargins(6, 6, 6, 6);
  header_ = new QLabel(numbers);
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  left->addWidget(header_);
  auto* form = new QFormLayout;
  form->setLabelAlignment(Qt::AlignRight);
  before_ms_ = add_value(form, tr("Before"), QStringLiteral("before_ms"));
  after_ms_ = add_value(form, tr("After"), QStringLiteral("after_ms"));
  before_kernels_ = add_value(form, tr("Kernels before"), QStringLiteral("before_kernels"));
  after_kernels_ = add_value(form, tr("Kernels after"), QStringLiteral("after_kernels"));
  speedup_ = add_value(form, tr("Speed-up"), QStringLiteral("speedup"));
  max_abs_ = add_value(form, tr("Max abs error"), QStringLiteral("max_abs_error"));
  max_rel_ = add_value(form, tr("Max rel error"), QStringLiteral("max_rel_error"));
  match_ = add_value(form, tr("Outputs"), QStringLiteral("outputs_match"));
  left->addLayout(form);
  excluded_ = new QLabel(numbers);
  excluded_->setObjectName(QStringLiteral("excluded"));
  excluded_->setWordWrap(true);
  excluded_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  left->addWidget(excluded_);
  reject_slower_ = new QPushButton(tr("Reject Groups That Measured Slower"), this);
  reject_slower_->setObjectName(QStringLiteral("RejectSlowerButton"));
  reject_slower_->setToolTip(
      tr("Reject, in one undoable step, every group of the plan whose fused kernel measured "
         "slower than its members run one by one"));
  left->addWidget(reject_slower_);
  connect(reject_slower_, &QPushButton::clicked, this, &ProfileSummary::reject_slower_requested);
  left->addStretch();

  chart_ = new SavingChart(this);
  auto* chart_scroll = new QScrollArea(this);
  chart_scroll->setWidget(chart_);
  chart_scroll->setWidgetResizable(true);
  chart_scroll->setFrameShape(QFrame::NoFrame);

  groups_ = new GroupResultModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(groups_);
  proxy_->setSortRole(GroupResultModel::kSortRole);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(numbers);
  split->addWidget(chart_scroll);
  split->addWidget(table_);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 2);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  connect(chart_, &SavingChart::group_clicked, this, &ProfileSummary::activate);
  chart_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(chart_, &QWidget::customContextMenuRequested, this, [this](QPoint pos) {
    std::unique_ptr<QMenu> menu(group_menu(chart_->group_at(pos)));
    menu->exec(chart_->mapToGlobal(pos));
  });
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(table_, &QWidget::customContextMenuRequested, this, [this](QPoint pos) {
    const QModelIndex i = table_->indexAt(pos);
    std::unique_ptr<QMenu> menu(
        group_menu(i.isValid() ? proxy_->data(i, GroupResultModel::kGroupIndexRole).toInt() : -1));
    menu->exec(table_->viewport()->mapToGlobal(pos));
  });
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& i) {
    activate(proxy_->data(i, GroupResultModel::kGroupIndexRole).toInt());
  });
  clear();
}

QLabel* ProfileSummary::add_value(QFormLayout* form, const QString& label, const QString& name) {
  auto* value = new QLabel(this);
  value->setObjectName(name);
  value->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow(label, value);
  return value;
}

QString ProfileSummary::value(const QString& name) const {
  const auto* l = findChild<QLabel*>(name);
  return l ? l->text() : QString();
}

void ProfileSummary::clear() {
  header_->setText(
      tr("No before/after profile yet: Tools > Profile Before/After (F9) measures the plan."));
  for (QLabel* l : {before_ms_, after_ms_, before_kernels_, after_kernels_, speedup_, max_abs_,
                    max_rel_, match_, excluded_})
    l->clear();
  groups_->set_groups({});
  chart_->set_groups({}, {});
  reject_slower_->setEnabled(false);
}

void ProfileSummary::set_result(const BeforeAfterResult& r) {
  const ProfileInput& in = r.input;
  QString head = tr("<b>%1</b>").arg(QString::fromStdString(in.model).toHtmlEscaped());
  if (!in.device.empty())
    head += tr(" on %1").arg(QString::fromStdString(in.device).toHtmlEscaped());
  if (in.runs > 0) head += tr("<br>median of %1 runs after %2 warm-up").arg(in.runs).arg(in.warmup);
  const auto total = [](const RunProfile& run, const Timeline& t) {
    QString s = format_ms(run.median_ms);
    if (!t.events.empty())
      s += tr("  (kernels %1)").arg(format_ms(BeforeAfterResult::kernel_us(t) / 1e3));
    return s;
  };
  before_ms_->setText(total(in.before, r.before));
  after_ms_->setText(total(in.after, r.after));
  before_kernels_->setText(QString::number(in.before.kernel_count));
  after_kernels_->setText(QString::number(in.after.kernel_count));
  speedup_->setText(format_speedup(in.speedup));
  max_abs_->setText(error_text(in.max_abs_error));
  max_rel_->setText(error_text(in.max_rel_error));
  const QString tolerance =
      std::isnan(r.rtol)
          ? QString()
          : tr(" (rtol %1, atol %2%3)")
                .arg(r.rtol, 0, 'g', 3)
                .arg(r.atol, 0, 'g', 3)
                .arg(r.tolerance_mode.isEmpty() ? QString() : QLatin1Char(' ') + r.tolerance_mode);
  if (!in.outputs_match)
    match_->setText(tr("not checked"));
  else if (*in.outputs_match)
    match_->setText(tr("<span style='color:#2a8a2a'>✔ match</span>") + tolerance);
  else
    match_->setText(
        tr("<span style='color:#c03030'>✘ differ</span>") + tolerance +
        (r.mismatch.isEmpty() ? QString() : QStringLiteral("<br>") + r.mismatch.toHtmlEscaped()));
  if (!r.codegen_note.isEmpty())
    head += QStringLiteral("<br><i>") + r.codegen_note.toHtmlEscaped() + QStringLiteral("</i>");
  header_->setText(head);
  QStringList excluded;
  for (const MeasuredGroup& g : in.groups)
    if (g.status == "excluded")
      excluded << tr("<b>%1</b>: %2")
                      .arg(QString::fromStdString(g.id).toHtmlEscaped(),
                           QString::fromStdString(g.reason.empty() ? "no reason given" : g.reason)
                               .toHtmlEscaped());
  excluded_->setText(excluded.isEmpty() ? QString()
                                        : tr("Excluded (%1):<br>").arg(excluded.size()) +
                                              excluded.join(QStringLiteral("<br>")));
  groups_->set_groups(in.groups);
  chart_->set_groups(in.groups, QString::fromStdString(in.estimate_profile));
  reject_slower_->setEnabled(slower_count() > 0);
  table_->resizeColumnsToContents();
}

int ProfileSummary::slower_count() const {
  int n = 0;
  for (int i = 0; i < groups_->rowCount(); ++i) {
    const MeasuredGroup& g = groups_->group(i);
    n += !g.excluded() && g.measured_saved_us < 0;
  }
  return n;
}

QMenu* ProfileSummary::group_menu(int group) {
  auto* menu = new QMenu(this);
  if (group >= 0 && group < groups_->rowCount()) {
    const MeasuredGroup& g = groups_->group(group);
    const QString id = QString::fromStdString(g.id);
    QAction* one = menu->addAction(
        std::isfinite(g.measured_saved_us)
            ? tr("Reject %1 (measured %2)").arg(id, format_seconds(g.measured_saved_us * 1e-6))
            : tr("Reject %1").arg(id),
        this, [this, id] { emit reject_requested({id}); });
    one->setObjectName(QStringLiteral("RejectGroupAction"));
    one->setEnabled(!g.excluded());
  }
  QAction* all =
      menu->addAction(tr("Reject All Groups That Measured Slower (%1)").arg(slower_count()), this,
                      &ProfileSummary::reject_slower_requested);
  all->setObjectName(QStringLiteral("RejectSlowerAction"));
  all->setEnabled(slower_count() > 0);
  return menu;
}

void ProfileSummary::activate(int group) {
  if (group < 0 || group >= groups_->rowCount()) return;
  QStringList nodes;
  for (const std::string& n : groups_->group(group).nodes) nodes << QString::fromStdString(n);
  emit group_activated(nodes);
}

}  // namespace fx::views
