// SPDX-License-Identifier: Apache-2.0
#pragma once
// Help for a reader of the window: the user guide (docs/user-guide.md, installed with the
// package), the keyboard shortcuts (read from the window's own actions, so the list is
// never out of date) and the glossary of the terms the window uses. Tooltips quote the
// same glossary (glossary_tip).

#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

class QMenuBar;
class QWidget;

namespace fx::views {

// Term and one or two sentences, in the order the help lists them.
const std::vector<std::pair<QString, QString>>& glossary();
QString glossary_tip(const QString& term);  // the definition, or empty

// The user guide's file: installed beside the binary's share/ folder, or the source
// tree's docs/ in a build tree. Empty when neither exists.
QString user_guide_path();

// "File > Open Model", one per action and submenu of the menu bar (mnemonics and "…"
// dropped); what a menu path in the window's text must name.
QStringList menu_paths(const QMenuBar* bar);
// "Ctrl+O\tFile > Open Model" for every action with a shortcut.
QStringList shortcut_lines(const QMenuBar* bar);

void show_user_guide(QWidget* parent);
void show_shortcuts(QWidget* parent, const QMenuBar* bar);
void show_glossary(QWidget* parent);

}  // namespace fx::views
