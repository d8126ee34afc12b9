// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc profile` in a child process, so that a crash, a hang or a compile error in the
// generated code never reaches the window. Owns one QProcess at a time; reports
// progress from the child's stderr, a timeout, Cancel, and the stdout on success.
//
// Progress: each stderr line is checked for "N/M" (e.g. "run 3/20") or "P%"; a match
// gives a determinate bar, otherwise the bar stays indeterminate and the line is only
// shown as text. The last stderr lines explain a failure.

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QStringList>

class QTimer;

namespace fx::views {

struct ProgressLine {
  int value = -1, maximum = -1;  // -1: no numbers in the line
  QString text;                  // the line, trimmed
};
ProgressLine parse_progress_line(const QString& line);

class ProfileRunner : public QObject {
  Q_OBJECT
 public:
  explicit ProfileRunner(QObject* parent = nullptr);
  ~ProfileRunner() override;

  void set_timeout_ms(int ms) { timeout_ms_ = ms; }  // 0: none
  void start(const QString& program, const QStringList& arguments);
  void cancel();  // kills the child; emits failed(cancelled=true)
  bool running() const;
  QString command_line() const;  // for messages

 signals:
  void progress(int value, int maximum, const QString& text);  // maximum 0: unknown
  void succeeded(const QByteArray& stdout_data);
  // Exactly one of succeeded/failed per start(). `cancelled`: the user asked.
  void failed(const QString& message, bool cancelled);

 private:
  void on_stderr();
  void on_finished(int exit_code, QProcess::ExitStatus status);
  void on_error(QProcess::ProcessError error);
  void finish_failed(const QString& message, bool cancelled);
  QString stderr_tail() const;

  QProcess* proc_ = nullptr;
  QTimer* timer_ = nullptr;
  int timeout_ms_ = 15 * 60 * 1000;
  QByteArray partial_line_;
  QStringList stderr_lines_;  // the last ones
  bool cancelled_ = false, timed_out_ = false, reported_ = false;
};

}  // namespace fx::views
