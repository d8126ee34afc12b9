// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Generate dock: the generated C++ of one fusion group (core: codegen/fused_program.h
// generate_group_source), read-only, syntax highlighted, copyable; "Compile" runs the
// system compiler on it (core: codegen/kernel_compiler.h) and lists the errors as
// file:line: message; clicking one moves the cursor to that line. Generation and
// compilation run off the UI thread.

#include <QFutureWatcher>
#include <QSyntaxHighlighter>
#include <QWidget>

#include <memory>

#include "views/model_document.h"

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;

namespace fx::views {

// C++ keywords, types, preprocessor lines, numbers, strings and comments.
class CppHighlighter : public QSyntaxHighlighter {
 public:
  explicit CppHighlighter(QTextDocument* doc, bool dark = false);
  void set_dark(bool dark);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  bool dark_;
};

class CodeDock : public QWidget {
  Q_OBJECT
 public:
  explicit CodeDock(QWidget* parent = nullptr);
  ~CodeDock() override;

  // Generates the group's source in a worker; `generated` follows.
  void generate(std::shared_ptr<ModelDocument> doc, const FusionGroup& group);
  void compile();
  // Drops the result of a running generate or compile (neither has a cancellation
  // point in core: the worker ends on its own, and a new one waits for it).
  void cancel();
  void copy_all() const;
  void set_dark(bool dark);
  void clear();

  QString source() const;
  QString group_id() const { return group_id_; }
  QStringList errors() const;  // "file:line: message", after compile()
  bool is_busy() const { return gen_job_.isRunning() || compile_job_.isRunning(); }
  QPlainTextEdit* editor() const { return editor_; }
  // Moves the cursor to a 1-based line of the source.
  void go_to_line(int line);

 signals:
  void generated();
  void compiled(bool ok);

 private:
  struct CompileResult {
    bool ok = false;
    QString message;  // first error "file:line: message", or what was built
  };
  QString group_id_;
  QLabel* title_;
  QPlainTextEdit* editor_;
  CppHighlighter* highlighter_;
  QListWidget* errors_;
  QPushButton* copy_;
  QPushButton* compile_;
  QFutureWatcher<QString> gen_job_;
  QFutureWatcher<CompileResult> compile_job_;
  bool gen_dropped_ = false, compile_dropped_ = false;
};

}  // namespace fx::views
