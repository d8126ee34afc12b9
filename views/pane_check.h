// SPDX-License-Identifier: Apache-2.0
#pragma once
// What each pane of the window shows, for `fusion-explorer --check` and the tests that
// open models without a person looking: whether the pane is empty, and when it is, the
// sentence it shows to say why (an empty pane without one is a problem), plus the
// errors and dialogs that came up while the model opened.

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <vector>

namespace fx::views {

class MainWindow;

struct PaneState {
  QString pane;         // "graph", "candidates", "inspector", "timeline"
  bool empty = false;   // shows no content
  QString explanation;  // what it says instead ("" when it says nothing)
  int items = 0;        // boxes, rows, lanes
};

std::vector<PaneState> pane_states(const MainWindow& window);

// "candidates: empty with no explanation", one per problem; none when every empty pane
// says why.
QStringList pane_problems(const std::vector<PaneState>& panes);

// { model, panes: [{pane, empty, explanation, items}], errors: [...], dialogs: [...],
//   problems: [...], ok } — ok when there are no problems, errors or dialogs.
QJsonObject check_report(const QString& model, const std::vector<PaneState>& panes,
                         const QStringList& errors, const QStringList& dialogs);

}  // namespace fx::views
