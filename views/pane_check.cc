// SPDX-License-Identifier: Apache-2.0
#include "views/pane_check.h"

#include <QJsonArray>

#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/inspector.h"
#include "views/main_window.h"
#include "views/timeline_view.h"

namespace fx::views {

std::vector<PaneState> pane_states(const MainWindow& window) {
  std::vector<PaneState> out;
  {
    PaneState s{QStringLiteral("graph")};
    s.items = window.scene()->box_count();
    s.empty = s.items == 0;
    if (s.empty) s.explanation = window.view()->empty_note();
    out.push_back(s);
  }
  {
    PaneState s{QStringLiteral("candidates")};
    s.items = window.candidate_model()->rowCount();
    s.empty = window.candidate_panel()->proxy()->rowCount() == 0;
    if (s.empty) s.explanation = window.candidate_panel()->empty_note();
    out.push_back(s);
  }
  {
    PaneState s{QStringLiteral("inspector")};
    s.items = window.inspector()->topLevelItemCount();
    s.empty = s.items == 0;
    if (s.empty) s.explanation = window.inspector()->empty_note();
    out.push_back(s);
  }
  {
    PaneState s{QStringLiteral("timeline")};
    s.items = window.timeline()->lane_count();
    s.empty = s.items == 0;
    // The summary line says why and what to do when there is no timeline yet.
    if (s.empty) s.explanation = window.timeline()->summary();
    out.push_back(s);
  }
  return out;
}

QStringList pane_problems(const std::vector<PaneState>& panes) {
  QStringList problems;
  for (const PaneState& s : panes)
    if (s.empty && s.explanation.trimmed().isEmpty())
      problems << QStringLiteral("%1: empty with no explanation").arg(s.pane);
  return problems;
}

QJsonObject check_report(const QString& model, const std::vector<PaneState>& panes,
                         const QStringList& errors, const QStringList& dialogs) {
  QJsonArray pane_list;
  for (const PaneState& s : panes)
    pane_list.append(QJsonObject{{QStringLiteral("pane"), s.pane},
                                 {QStringLiteral("empty"), s.empty},
                                 {QStringLiteral("explanation"), s.explanation},
                                 {QStringLiteral("items"), s.items}});
  const QStringList problems = pane_problems(panes);
  return {{QStringLiteral("model"), model},
          {QStringLiteral("panes"), pane_list},
          {QStringLiteral("errors"), QJsonArray::fromStringList(errors)},
          {QStringLiteral("dialogs"), QJsonArray::fromStringList(dialogs)},
          {QStringLiteral("problems"), QJsonArray::fromStringList(problems)},
          {QStringLiteral("ok"), problems.isEmpty() && errors.isEmpty() && dialogs.isEmpty()}};
}

}  // namespace fx::views
