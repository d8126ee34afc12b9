// SPDX-License-Identifier: Apache-2.0
#include "views/profile_runner.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QTimer>

namespace fx::views {

ProgressLine parse_progress_line(const QString& line) {
  ProgressLine p;
  p.text = line.trimmed();
  static const QRegularExpression fraction(
      QStringLiteral("(?<![\\d/.])(\\d+)\\s*/\\s*(\\d+)(?![\\d./])"));
  static const QRegularExpression percent(QStringLiteral("(\\d+(?:\\.\\d+)?)\\s*%"));
  // "N/M" only when it reads like a count (M > 0, N <= M): not a path or a date.
  auto m = fraction.match(p.text);
  while (m.hasMatch()) {
    const int n = m.captured(1).toInt(), total = m.captured(2).toInt();
    if (total > 0 && n <= total) {
      p.value = n, p.maximum = total;
      return p;
    }
    m = fraction.match(p.text, m.capturedEnd());
  }
  if (auto pm = percent.match(p.text); pm.hasMatch()) {
    const double v = pm.captured(1).toDouble();
    if (v >= 0 && v <= 100) p.value = int(v), p.maximum = 100;
  }
  return p;
}

ProfileRunner::ProfileRunner(QObject* parent) : QObject(parent) {
  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  connect(timer_, &QTimer::timeout, this, [this] {
    if (!running()) return;
    timed_out_ = true;
    proc_->kill();
  });
}

ProfileRunner::~ProfileRunner() {
  if (running()) {
    proc_->disconnect(this);
    proc_->kill();
    proc_->waitForFinished(2000);
  }
}

bool ProfileRunner::running() const {
  return proc_ && proc_->state() != QProcess::NotRunning;
}

QString ProfileRunner::command_line() const {
  if (!proc_) return {};
  return (QStringList{QFileInfo(proc_->program()).fileName()} + proc_->arguments())
      .join(QLatin1Char(' '));
}

void ProfileRunner::start(const QString& program, const QStringList& arguments) {
  if (running()) return;
  if (proc_) proc_->deleteLater();  // a finished one: its signals are done
  proc_ = new QProcess(this);
  partial_line_.clear();
  stderr_lines_.clear();
  cancelled_ = timed_out_ = reported_ = false;
  connect(proc_, &QProcess::readyReadStandardError, this, &ProfileRunner::on_stderr);
  connect(proc_, &QProcess::finished, this, &ProfileRunner::on_finished);
  connect(proc_, &QProcess::errorOccurred, this, &ProfileRunner::on_error);
  emit progress(0, 0, tr("Starting %1…").arg(QFileInfo(program).fileName()));
  if (timeout_ms_ > 0) timer_->start(timeout_ms_);
  proc_->start(program, arguments);
}

void ProfileRunner::cancel() {
  if (!running()) return;
  cancelled_ = true;
  proc_->kill();  // on_finished reports it
}

void ProfileRunner::on_stderr() {
  partial_line_ += proc_->readAllStandardError();
  // Progress bars print "\r" updates; treat them as line ends too.
  partial_line_.replace('\r', '\n');
  qsizetype nl;
  while ((nl = partial_line_.indexOf('\n')) >= 0) {
    const QString line = QString::fromLocal8Bit(partial_line_.left(nl)).trimmed();
    partial_line_.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    stderr_lines_ << line;
    if (stderr_lines_.size() > 40) stderr_lines_.removeFirst();
    const ProgressLine p = parse_progress_line(line);
    emit progress(std::max(p.value, 0), std::max(p.maximum, 0), p.text);
  }
}

QString ProfileRunner::stderr_tail() const {
  QStringList lines = stderr_lines_;
  if (!partial_line_.trimmed().isEmpty()) lines << QString::fromLocal8Bit(partial_line_).trimmed();
  return lines.mid(std::max<qsizetype>(0, lines.size() - 6)).join(QLatin1Char('\n'));
}

void ProfileRunner::finish_failed(const QString& message, bool cancelled) {
  if (reported_) return;
  reported_ = true;
  timer_->stop();
  emit failed(message, cancelled);
}

void ProfileRunner::on_error(QProcess::ProcessError error) {
  // Crashes and exits arrive through finished(); only a child that never ran ends here.
  if (error == QProcess::FailedToStart)
    finish_failed(
        tr("The profiler cannot start: %1.\n\n%2").arg(proc_->errorString(), proc_->program()),
        false);
}

void ProfileRunner::on_finished(int exit_code, QProcess::ExitStatus status) {
  if (reported_) return;
  on_stderr();
  const QString tail = stderr_tail();
  // One plain sentence first; the command and the child's last words are details (the
  // window shows them behind an expander, never in the status bar).
  const QString details = QStringLiteral("\n\n") + command_line() +
                          (tail.isEmpty() ? QString() : QStringLiteral("\n\n") + tail);
  if (cancelled_) return finish_failed(tr("Profiling cancelled"), true);
  if (timed_out_)
    return finish_failed(
        tr("The profiler ran longer than %1 s and was stopped.").arg(timeout_ms_ / 1000) + details,
        false);
  if (status == QProcess::CrashExit)
    return finish_failed(tr("The profiler crashed.") + details, false);
  if (exit_code != 0)
    return finish_failed(tr("The profiler failed (exit code %1).").arg(exit_code) + details, false);
  reported_ = true;
  timer_->stop();
  emit succeeded(proc_->readAllStandardOutput());
}

}  // namespace fx::views
