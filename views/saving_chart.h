// SPDX-License-Identifier: Apache-2.0
#pragma once
// Predicted vs measured time saved per fusion group, as paired horizontal bars on one
// microsecond scale: predicted (outlined, from the estimate's device profile) above
// measured (filled in the group's timeline colour). A negative measured saving (the
// fused kernel was slower) extends left of zero, hatched in dark red. Excluded groups are not drawn
// (the summary lists them with their reason); groups without a number show "–".

#include <QWidget>

#include <vector>

#include "report/profile_input.h"

namespace fx::views {

class SavingChart : public QWidget {
  Q_OBJECT
 public:
  explicit SavingChart(QWidget* parent = nullptr);
  // `estimate_profile` names the device profile behind the predictions (legend).
  void set_groups(const std::vector<MeasuredGroup>& groups, const QString& estimate_profile);
  int bar_count() const { return int(rows_.size()); }
  // Group index (into the groups given) drawn at a widget position, or -1.
  int group_at(QPoint pos) const;
  int flagged_count() const;  // bars whose measurement falls outside the estimate
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void group_clicked(int group);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;  // tooltips

 private:
  struct Row {
    int group;
    QString id, pattern;
    double predicted, measured;  // µs, NaN when unknown
    QString flag;                // estimate_check.h: why the measurement disagrees, or empty
  };
  int row_top(int i) const;
  std::vector<Row> rows_;
  QString profile_;
};

}  // namespace fx::views
