// SPDX-License-Identifier: Apache-2.0
#include "views/help.h"

#include <QAction>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace fx::views {

const std::vector<std::pair<QString, QString>>& glossary() {
  static const std::vector<std::pair<QString, QString>> terms = {
      {QObject::tr("Group"),
       QObject::tr("A set of adjacent nodes the analysis proposes to run as one kernel. Its id "
                   "(fg-…) is derived from its node names; its label names its pattern and first "
                   "node.")},
      {QObject::tr("Candidate"),
       QObject::tr("A group nobody has decided on yet. Only accepted groups are fused.")},
      {QObject::tr("Plan"),
       QObject::tr("Your decisions: which groups are accepted or rejected. Every count and time "
                   "shown \"after fusion\" is the plan's: the accepted groups fused, the rest as "
                   "they are.")},
      {QObject::tr("Kernel"),
       QObject::tr("One launch: a node run on its own, or a fused group run as one.")},
      {QObject::tr("Anchor"),
       QObject::tr("The expensive op a group is built around (Conv, MatMul, Gemm); the ops fused "
                   "into it read or write its data without another trip to memory. A group has "
                   "at most one.")},
      {QObject::tr("Opaque"),
       QObject::tr("An op the analysis cannot fuse with anything (unknown or custom ops, ops whose "
                   "output size depends on the data, control flow). It always runs as its own "
                   "kernel.")},
      {QObject::tr("Traffic cut"),
       QObject::tr("The share of the members' memory traffic that the fused kernel no longer "
                   "moves. \"Accept all ≥\" compares with it.")},
      {QObject::tr("Launches saved"),
       QObject::tr("Kernel launches the group's generated code removes: a group Generate cannot "
                   "make one kernel is credited only with what its parts remove.")},
      {QObject::tr("Estimate"),
       QObject::tr("A cost model's figure for the chosen device, not a measurement "
                   "(Tools > Profile Before/After measures).")},
      {QObject::tr("Measured slower"),
       QObject::tr("A group whose fused kernel took longer than its members run one by one. "
                   "Reject it from the saving chart, the group table or the timeline "
                   "(right-click).")},
      {QObject::tr("Opt level"),
       QObject::tr("How far the analysis goes: 0 finds nothing, 1 known patterns, 2 adds "
                   "automatic vertical fusion, 3 adds horizontal fusion of siblings.")},
      {QObject::tr("Scope"),
       QObject::tr("A box of the graph: a name scope of the exporter, or, in a model without "
                   "scopes, a repeated block or a region between cut points.")},
  };
  return terms;
}

QString glossary_tip(const QString& term) {
  for (const auto& [t, text] : glossary())
    if (t.compare(term, Qt::CaseInsensitive) == 0) return text;
  return {};
}

QString user_guide_path() {
  const QString app = QCoreApplication::applicationDirPath();
  const QStringList candidates = {
      app + QStringLiteral("/../share/doc/fusion-explorer/user-guide.md"),
#ifdef FX_SOURCE_DOCS_DIR
      QStringLiteral(FX_SOURCE_DOCS_DIR "/user-guide.md"),
#endif
  };
  for (const QString& c : candidates)
    if (QFileInfo::exists(c)) return QFileInfo(c).canonicalFilePath();
  return {};
}

namespace {
QString plain(QString text) {
  text.remove(QLatin1Char('&'));
  text.remove(QStringLiteral("…"));
  text.remove(QStringLiteral("..."));
  return text.trimmed();
}

template <class F>
void walk(const QMenu* menu, const QString& prefix, const F& visit) {
  for (QAction* a : menu->actions()) {
    if (a->isSeparator()) continue;
    const QString path = prefix + QStringLiteral(" > ") + plain(a->text());
    visit(path, a);  // a submenu is a path too ("File > Export")
    if (a->menu()) walk(a->menu(), path, visit);
  }
}

template <class F>
void walk(const QMenuBar* bar, const F& visit) {
  for (QAction* top : bar->actions())
    if (top->menu()) walk(top->menu(), plain(top->text()), visit);
}

QDialog* text_dialog(QWidget* parent, const QString& title, const QString& markdown) {
  auto* d = new QDialog(parent);
  d->setAttribute(Qt::WA_DeleteOnClose);
  d->setWindowTitle(title);
  auto* text = new QTextBrowser(d);
  text->setOpenExternalLinks(true);
  text->setMarkdown(markdown);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, d);
  QObject::connect(buttons, &QDialogButtonBox::rejected, d, &QDialog::close);
  auto* layout = new QVBoxLayout(d);
  layout->addWidget(text);
  layout->addWidget(buttons);
  d->resize(760, 640);
  return d;
}
}  // namespace

QStringList menu_paths(const QMenuBar* bar) {
  QStringList out;
  walk(bar, [&](const QString& path, QAction*) { out << path; });
  return out;
}

QStringList shortcut_lines(const QMenuBar* bar) {
  QStringList out;
  walk(bar, [&](const QString& path, QAction* a) {
    if (!a->shortcut().isEmpty())
      out << a->shortcut().toString(QKeySequence::NativeText) + QLatin1Char('\t') + path;
  });
  return out;
}

void show_user_guide(QWidget* parent) {
  const QString path = user_guide_path();
  QString text;
  if (QFile f(path); !path.isEmpty() && f.open(QIODevice::ReadOnly))
    text = QString::fromUtf8(f.readAll());
  else
    text = QObject::tr(
        "The user guide (user-guide.md) is not installed beside this program. "
        "It is in the source tree's docs/ folder.");
  text_dialog(parent, QObject::tr("Fusion Explorer User Guide"), text)->show();
}

void show_shortcuts(QWidget* parent, const QMenuBar* bar) {
  QString md = QObject::tr("| Keys | Command |\n|---|---|\n");
  for (const QString& line : shortcut_lines(bar)) {
    const auto parts = line.split(QLatin1Char('\t'));
    md += QStringLiteral("| %1 | %2 |\n").arg(parts.value(0), parts.value(1));
  }
  md += QObject::tr(
      "\nIn the graph: double-click a box to open or close it; mouse wheel zooms; "
      "drag pans. In the timeline: wheel zooms, drag pans, Shift+drag picks a "
      "range, double-click fits.\n");
  text_dialog(parent, QObject::tr("Keyboard Shortcuts"), md)->show();
}

void show_glossary(QWidget* parent) {
  QString md;
  for (const auto& [term, text] : glossary())
    md += QStringLiteral("**%1** — %2\n\n").arg(term, text);
  text_dialog(parent, QObject::tr("Glossary"), md)->show();
}

}  // namespace fx::views
