// SPDX-License-Identifier: Apache-2.0
#include "views/dims_panel.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "onnx/model_loader.h"

namespace fx::views {

DimsPanel::DimsPanel(QWidget* parent) : QWidget(parent) {
  auto* box = new QVBoxLayout(this);
  empty_ = new QLabel(tr("The model has no symbolic dimensions."), this);
  empty_->setWordWrap(true);
  box->addWidget(empty_);
  form_ = new QFormLayout();
  box->addLayout(form_);
  apply_ = new QPushButton(tr("Apply"), this);
  apply_->setToolTip(tr("Read the model again with these dimensions; decisions are kept"));
  apply_->setEnabled(false);
  box->addWidget(apply_, 0, Qt::AlignRight);
  box->addStretch(1);
  connect(apply_, &QPushButton::clicked, this, &DimsPanel::apply);
}

void DimsPanel::show_dims(const LoadedModel& model, const std::map<std::string, int64_t>& bound) {
  while (form_->rowCount() > 0) form_->removeRow(0);
  rows_.clear();
  auto add = [&](const std::string& name, int64_t value, bool assumed, const QString& kind) {
    auto* row = new QWidget(this);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto* spin = new QSpinBox(row);
    spin->setRange(1, 1 << 20);
    spin->setValue(int(value));
    auto* note = new QLabel(assumed ? tr("assumed (%1)").arg(kind) : tr("set"), row);
    if (assumed) note->setStyleSheet(QStringLiteral("color: palette(mid); font-style: italic"));
    h->addWidget(spin);
    h->addWidget(note, 1);
    form_->addRow(QString::fromStdString(name), row);
    rows_[name] = Row{spin, note, value, assumed};
    connect(spin, &QSpinBox::valueChanged, this, [this] { apply_->setEnabled(true); });
  };
  for (const auto& [name, value] : bound) add(name, value, false, {});
  for (const auto& a : model.assumed_dims)
    add(a.symbol, a.value, true, QString::fromUtf8(transforms::dim_kind_name(a.kind)));
  empty_->setVisible(rows_.empty());
  apply_->setEnabled(false);
}

int64_t DimsPanel::value(const std::string& name) const {
  auto it = rows_.find(name);
  return it == rows_.end() ? -1 : it->second.box->value();
}

bool DimsPanel::is_assumed(const std::string& name) const {
  auto it = rows_.find(name);
  return it != rows_.end() && it->second.assumed;
}

void DimsPanel::apply() {
  std::map<std::string, int64_t> dims;
  for (const auto& [name, row] : rows_)
    if (!row.assumed || row.box->value() != row.shown) dims[name] = row.box->value();
  apply_->setEnabled(false);
  emit dims_changed(dims);
}

}  // namespace fx::views
