// SPDX-License-Identifier: Apache-2.0
#pragma once
// The symbolic dimensions of the open model, editable: each with its value, marked
// "assumed" (bound by the default rule, transforms/dim_defaults.h) or "set" (bound by
// the user). Apply emits every dim the user set or changed; the document controller
// then reads the model again with them and keeps the decisions (set_dims).

#include <QWidget>

#include <cstdint>
#include <map>
#include <string>

class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;

namespace fx {
struct LoadedModel;
}

namespace fx::views {

class DimsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DimsPanel(QWidget* parent = nullptr);

  // The dims `model` was read with: its assumed ones and those in `bound`.
  void show_dims(const LoadedModel& model, const std::map<std::string, int64_t>& bound);
  // The value shown for a dim (-1 when it is not listed); for tests.
  int64_t value(const std::string& name) const;
  bool is_assumed(const std::string& name) const;

 signals:
  // The user's dims: those already set and those edited since show_dims.
  void dims_changed(const std::map<std::string, int64_t>& dims);

 private:
  struct Row {
    QSpinBox* box = nullptr;
    QLabel* note = nullptr;
    int64_t shown = 0;
    bool assumed = false;
  };
  void apply();

  QFormLayout* form_;
  QLabel* empty_;
  QPushButton* apply_;
  std::map<std::string, Row> rows_;
};

}  // namespace fx::views
