// SPDX-License-Identifier: Apache-2.0
#include "views/code_view.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTextBlock>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

#include "codegen/fused_program.h"
#include "codegen/kernel_compiler.h"
#include "codegen/kernel_ir.h"

namespace fx::views {

CppHighlighter::CppHighlighter(QTextDocument* doc, bool dark)
    : QSyntaxHighlighter(doc), dark_(dark) {}

void CppHighlighter::set_dark(bool dark) {
  dark_ = dark;
  rehighlight();
}

void CppHighlighter::highlightBlock(const QString& text) {
  auto fmt = [](QColor c, bool bold = false, bool italic = false) {
    QTextCharFormat f;
    f.setForeground(c);
    if (bold) f.setFontWeight(QFont::Bold);
    f.setFontItalic(italic);
    return f;
  };
  const QTextCharFormat keyword = fmt(dark_ ? QColor(200, 140, 255) : QColor(130, 30, 170), true);
  const QTextCharFormat type = fmt(dark_ ? QColor(90, 200, 220) : QColor(20, 110, 140));
  const QTextCharFormat number = fmt(dark_ ? QColor(240, 170, 100) : QColor(170, 80, 0));
  const QTextCharFormat string = fmt(dark_ ? QColor(150, 210, 120) : QColor(30, 130, 40));
  const QTextCharFormat preproc = fmt(dark_ ? QColor(230, 120, 120) : QColor(160, 40, 40));
  const QTextCharFormat comment =
      fmt(dark_ ? QColor(130, 140, 150) : QColor(110, 115, 125), false, true);

  static const QRegularExpression kw(QStringLiteral(
      "\\b(if|else|for|while|do|return|const|constexpr|static|inline|extern|namespace|using|"
      "struct|class|template|typename|auto|break|continue|switch|case|default|sizeof|"
      "static_cast|reinterpret_cast|restrict|__restrict__|pragma|omp|simd|parallel)\\b"));
  static const QRegularExpression ty(QStringLiteral(
      "\\b(void|float|double|int|long|unsigned|char|bool|size_t|int64_t|int32_t|uint8_t|"
      "uint32_t|uint64_t|std::\\w+)\\b"));
  static const QRegularExpression num(
      QStringLiteral("\\b[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?f?\\b"));
  static const QRegularExpression str(QStringLiteral("\"([^\"\\\\]|\\\\.)*\""));
  for (const auto& [re, f] :
       {std::pair{&kw, keyword}, {&ty, type}, {&num, number}, {&str, string}}) {
    for (auto it = re->globalMatch(text); it.hasNext();) {
      const auto m = it.next();
      setFormat(int(m.capturedStart()), int(m.capturedLength()), f);
    }
  }
  const QString trimmed = text.trimmed();
  if (trimmed.startsWith(QLatin1Char('#'))) setFormat(0, int(text.size()), preproc);

  // Comments last: they win over everything inside them. Block comments carry state.
  int start = previousBlockState() == 1 ? 0 : -1;
  int from = 0;
  setCurrentBlockState(0);
  while (true) {
    if (start < 0) {
      const int line = int(text.indexOf(QStringLiteral("//"), from));
      const int block = int(text.indexOf(QStringLiteral("/*"), from));
      if (line >= 0 && (block < 0 || line < block)) {
        setFormat(line, int(text.size()) - line, comment);
        return;
      }
      if (block < 0) return;
      start = block;
      from = block + 2;
    }
    const int end = int(text.indexOf(QStringLiteral("*/"), from));
    if (end < 0) {
      setFormat(start, int(text.size()) - start, comment);
      setCurrentBlockState(1);
      return;
    }
    setFormat(start, end + 2 - start, comment);
    from = end + 2;
    start = -1;
  }
}

CodeDock::CodeDock(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("CodeDockWidget"));
  title_ = new QLabel(tr("Select a fusion group and press Generate (F6)"), this);
  title_->setWordWrap(true);
  editor_ = new QPlainTextEdit(this);
  editor_->setReadOnly(true);
  editor_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  editor_->setLineWrapMode(QPlainTextEdit::NoWrap);
  editor_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  highlighter_ = new CppHighlighter(editor_->document());
  errors_ = new QListWidget(this);
  errors_->setMaximumHeight(70);
  errors_->hide();
  copy_ = new QPushButton(tr("Copy"), this);
  compile_ = new QPushButton(tr("Compile"), this);
  copy_->setEnabled(false);
  compile_->setEnabled(false);
  compile_->setToolTip(tr("Compile the source with the system C++ compiler and list errors"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(title_, 1);
  buttons->addWidget(copy_);
  buttons->addWidget(compile_);
  auto* box = new QVBoxLayout(this);
  box->setContentsMargins(4, 4, 4, 4);
  box->addLayout(buttons);
  box->addWidget(editor_, 1);
  box->addWidget(errors_);
  connect(copy_, &QPushButton::clicked, this, &CodeDock::copy_all);
  connect(compile_, &QPushButton::clicked, this, &CodeDock::compile);
  connect(errors_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    static const QRegularExpression line_re(QStringLiteral(":(\\d+):"));
    const auto m = line_re.match(item->text());
    if (m.hasMatch()) go_to_line(m.captured(1).toInt());
  });
  connect(&gen_job_, &QFutureWatcherBase::finished, this, [this] {
    if (std::exchange(gen_dropped_, false)) return;
    editor_->setPlainText(gen_job_.result());
    copy_->setEnabled(true);
    compile_->setEnabled(true);
    emit generated();
  });
  connect(&compile_job_, &QFutureWatcherBase::finished, this, [this] {
    if (std::exchange(compile_dropped_, false)) {
      compile_->setEnabled(true);
      return;
    }
    const CompileResult r = compile_job_.result();
    compile_->setEnabled(true);
    errors_->clear();
    errors_->addItem(r.message);
    errors_->item(0)->setForeground(r.ok ? QColor(30, 140, 60) : QColor(200, 40, 40));
    errors_->show();
    if (!r.ok) errors_->itemActivated(errors_->item(0));
    emit compiled(r.ok);
  });
}

CodeDock::~CodeDock() {
  gen_job_.waitForFinished();
  compile_job_.waitForFinished();
}

void CodeDock::set_dark(bool dark) {
  highlighter_->set_dark(dark);
}

void CodeDock::clear() {
  group_id_.clear();
  editor_->clear();
  errors_->clear();
  errors_->hide();
  copy_->setEnabled(false);
  compile_->setEnabled(false);
}

void CodeDock::generate(std::shared_ptr<ModelDocument> doc, const FusionGroup& group) {
  if (!doc || gen_job_.isRunning()) return;
  group_id_ = QString::fromStdString(group.id);
  title_->setText(tr("%1 · %2 · %3 ops")
                      .arg(group_id_, QString::fromStdString(group.pattern))
                      .arg(group.nodes.size()));
  errors_->clear();
  errors_->hide();
  editor_->setPlainText(tr("// generating…"));
  copy_->setEnabled(false);
  compile_->setEnabled(false);
  gen_job_.setFuture(QtConcurrent::run(
      [doc, group] { return QString::fromStdString(generate_group_source(doc->graph(), group)); }));
}

void CodeDock::cancel() {
  if (gen_job_.isRunning() && !gen_dropped_) {
    gen_dropped_ = true;
    editor_->setPlainText(tr("// cancelled"));
  }
  if (compile_job_.isRunning() && !compile_dropped_) {
    compile_dropped_ = true;
    errors_->clear();
    errors_->addItem(tr("Compile cancelled"));
  }
}

void CodeDock::compile() {
  if (compile_job_.isRunning() || source().isEmpty()) return;
  compile_->setEnabled(false);
  errors_->clear();
  errors_->addItem(tr("Compiling…"));
  errors_->show();
  const std::string src = source().toStdString();
  const std::string stem = "gui-" + c_identifier(group_id_.toStdString());
  compile_job_.setFuture(QtConcurrent::run([src, stem] {
    CompileResult r;
    try {
      KernelCompiler cc;
      auto lib = cc.build(src, stem);
      r.ok = true;
      r.message = QObject::tr("Compiled: %1").arg(QString::fromStdString(lib->so_path()));
    } catch (const std::exception& e) {
      r.message = QString::fromUtf8(e.what());
    }
    return r;
  }));
}

void CodeDock::copy_all() const {
  QApplication::clipboard()->setText(source());
}

QString CodeDock::source() const {
  return copy_->isEnabled() ? editor_->toPlainText() : QString();
}

QStringList CodeDock::errors() const {
  QStringList out;
  for (int i = 0; i < errors_->count(); ++i) out << errors_->item(i)->text();
  return out;
}

void CodeDock::go_to_line(int line) {
  const QTextBlock block = editor_->document()->findBlockByLineNumber(line - 1);
  if (!block.isValid()) return;
  QTextCursor c(block);
  c.select(QTextCursor::LineUnderCursor);
  editor_->setTextCursor(c);
  editor_->centerCursor();
}

}  // namespace fx::views
