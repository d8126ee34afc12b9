// MainWindow's profiling: `fxc profile` in a child process (QProcess: the UI never
// waits on it), its Chrome trace read into the timeline; loading traces from files.
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardPaths>
#include <QStatusBar>

#include "profile/chrome_trace.h"
#include "util/error.h"
#include "views/main_window.h"
#include "views/timeline_view.h"

namespace fx::views {

QString MainWindow::default_profiler() const {
  // The build tree has app/gui/fusion-explorer and app/fxc/fxc; an install has both
  // in one bin directory.
  const QString dir = QCoreApplication::applicationDirPath();
  for (const QString& p : {dir + QStringLiteral("/fxc"), dir + QStringLiteral("/../fxc/fxc")})
    if (QFileInfo(p).isExecutable()) return QFileInfo(p).canonicalFilePath();
  return QStandardPaths::findExecutable(QStringLiteral("fxc"));
}

void MainWindow::profile() {
  if (!doc_ || (profile_proc_ && profile_proc_->state() != QProcess::NotRunning)) return;
  const QString program = profiler_.isEmpty() ? default_profiler() : profiler_;
  if (program.isEmpty()) {
    show_error(tr("Cannot profile"), tr("fxc was not found next to fusion-explorer or on PATH"));
    emit profile_finished(false);
    return;
  }
  profile_trace_ = QDir::temp().filePath(QStringLiteral("fusion-explorer-%1-%2.trace.json")
                                             .arg(QCoreApplication::applicationPid())
                                             .arg(QFileInfo(doc_->path).completeBaseName()));
  QFile::remove(profile_trace_);
  if (!profile_proc_) {
    profile_proc_ = new QProcess(this);
    connect(profile_proc_, &QProcess::finished, this,
            [this](int code, QProcess::ExitStatus status) {
              on_profile_finished(code, status == QProcess::CrashExit);
            });
    connect(profile_proc_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
      if (e == QProcess::FailedToStart) {
        hide_progress();
        show_error(tr("Profiling failed"), tr("%1: cannot start").arg(profile_proc_->program()));
        emit profile_finished(false);
      }
    });
  }
  show_progress(tr("Profiling…"), 0, 0);
  cancel_->show();
  disconnect(cancel_, &QPushButton::clicked, this, nullptr);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    if (profile_proc_ && profile_proc_->state() != QProcess::NotRunning) profile_proc_->kill();
    cancel_jobs();
  });
  profile_proc_->start(
      program, {QStringLiteral("profile"), doc_->path, QStringLiteral("--trace"), profile_trace_});
}

void MainWindow::on_profile_finished(int exit_code, bool crashed) {
  hide_progress();
  disconnect(cancel_, &QPushButton::clicked, this, nullptr);
  connect(cancel_, &QPushButton::clicked, this, &MainWindow::cancel_jobs);
  const QString err = QString::fromLocal8Bit(profile_proc_->readAllStandardError()).trimmed();
  const QString tail = err.section(QLatin1Char('\n'), -5);  // the last lines say why
  if (crashed || exit_code != 0) {
    show_error(tr("Profiling failed"),
               crashed ? tr("the profiler crashed. %1").arg(tail)
                       : tr("the profiler exited with code %1. %2").arg(exit_code).arg(tail));
    emit profile_finished(false);
    return;
  }
  const bool ok = load_timeline(profile_trace_, tr("measured"));
  QFile::remove(profile_trace_);
  emit profile_finished(ok);
}

bool MainWindow::load_timeline(const QString& path, const QString& lane_title) {
  try {
    timeline_->set_lane(lane_title, read_trace(path.toStdString()));
  } catch (const Error& e) {
    show_error(tr("Cannot read timeline"), QString::fromUtf8(e.what()));
    return false;
  }
  if (auto* dock = qobject_cast<QWidget*>(timeline_->parent())) dock->raise();
  statusBar()->showMessage(timeline_->summary(), 10'000);
  return true;
}

}  // namespace fx::views
