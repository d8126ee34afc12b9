// SPDX-License-Identifier: Apache-2.0
#pragma once
// The inspector dock: what is known about the selected node, scope group or fusion
// group, as a two-column tree (copyable with Ctrl+C).

#include <QTreeWidget>

#include "views/model_document.h"

namespace fx::views {

class Inspector : public QTreeWidget {
  Q_OBJECT
 public:
  explicit Inspector(QWidget* parent = nullptr);

  void show_node(const ModelDocument& doc, NodeId node);
  void show_scope_group(const ModelDocument& doc, drawing::GroupId group);
  void show_fusion_group(const ModelDocument& doc, int plan_group);
  void show_nothing();
  // The model as a whole: what is shown when nothing is selected.
  void show_model(const ModelDocument& doc);
  // The value of the first row whose first column is `key`, searching all levels
  // (for tests and for copying).
  QString value_of(const QString& key) const;
  // The plan group shown, or -1 (a decision repaints it in place: refresh()).
  int shown_fusion_group() const { return fusion_group_; }
  // Shows what is shown again with the document's current state (a decision, shapes
  // inferred): the model, the node or the plan group stays the one shown.
  void refresh(const ModelDocument& doc);
  // What the empty inspector says (no model open), painted while it has no rows.
  void set_empty_note(const QString& note);
  const QString& empty_note() const { return empty_note_; }

 protected:
  void keyPressEvent(QKeyEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  QTreeWidgetItem* section(const QString& title);
  void row(QTreeWidgetItem* parent, const QString& key, const QString& value);
  void not_fused_rows(const ModelDocument& doc, const std::vector<std::string>& members);
  int fusion_group_ = -1;
  NodeId node_ = kNoNode;  // the node shown (refresh() shows it again: its shapes, its group)
  bool showing_model_ = false;
  QString empty_note_;
};

}  // namespace fx::views
