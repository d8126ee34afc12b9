// SPDX-License-Identifier: Apache-2.0
#include "views/profile_controller.h"

#include <filesystem>

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include "util/error.h"
#include "views/model_document.h"
#include "views/profile_runner.h"

namespace fx::views {

ProfileController::ProfileController(QObject* parent)
    : QObject(parent), runner_(new ProfileRunner(this)) {
  connect(runner_, &ProfileRunner::progress, this, &ProfileController::progress);
  connect(runner_, &ProfileRunner::succeeded, this, &ProfileController::on_output);
  connect(runner_, &ProfileRunner::failed, this, &ProfileController::on_failed);
}

ProfileController::~ProfileController() = default;

QString ProfileController::default_program() {
  // An install has both executables in one bin directory; the build tree has
  // app/gui/fusion-explorer and app/fxc.
  const QString dir = QCoreApplication::applicationDirPath();
  const QStringList candidates{dir + QStringLiteral("/fxc"), dir + QStringLiteral("/../fxc")};
  for (const QString& p : candidates) {
    const QFileInfo fi(p);
    if (fi.isFile() && fi.isExecutable()) return fi.canonicalFilePath();
  }
  return QStandardPaths::findExecutable(QStringLiteral("fxc"));
}

void ProfileController::set_timeout_ms(int ms) {
  runner_->set_timeout_ms(ms);
}

bool ProfileController::running() const {
  return runner_->running();
}

void ProfileController::cancel() {
  runner_->cancel();
}

void ProfileController::clear() {
  if (running()) cancel();
  json_.clear();
  origin_.clear();
}

bool ProfileController::start(const ModelDocument& doc) {
  if (running()) return false;
  const QString program = program_.isEmpty() ? default_program() : program_;
  auto refuse = [this](const QString& message) {
    emit failed(tr("Cannot profile"), message);
    emit finished(false);
    return false;
  };
  if (program.isEmpty()) return refuse(tr("fxc was not found next to fusion-explorer or on PATH"));
  dir_ = std::make_unique<QTemporaryDir>();
  const QString plan = dir_->filePath(QStringLiteral("plan.json"));
  try {
    if (!dir_->isValid()) throw Error("cannot create a temporary directory");
    doc.plan.save(plan.toStdString());  // the plan as it is now, saved or not
  } catch (const Error& e) {
    return refuse(QString::fromUtf8(e.what()));
  }
  emit started();
  runner_->start(program,
                 profile_arguments(doc, plan, dir_->filePath(QStringLiteral("before.trace.json")),
                                   dir_->filePath(QStringLiteral("after.trace.json"))));
  return true;
}

QStringList profile_arguments(const ModelDocument& doc, const QString& plan,
                              const QString& trace_before, const QString& trace_after) {
  return QStringList{QStringLiteral("profile"),
                     doc.path,
                     QStringLiteral("--plan"),
                     plan,
                     QStringLiteral("--json"),
                     QStringLiteral("--trace-before"),
                     trace_before,
                     QStringLiteral("--trace-after"),
                     trace_after}
         << model_arguments(doc.load_options()) << QStringLiteral("--device")
         << profile_run_device(doc.settings.device, gpu_present());
}

QString profile_run_device(const QString& analysis_device, bool gpu) {
  const bool gpu_profile = analysis_device.startsWith(QStringLiteral("nvidia-")) ||
                           analysis_device.startsWith(QStringLiteral("cuda-"));
  return gpu && gpu_profile ? QStringLiteral("cuda") : QStringLiteral("cpu");
}

bool gpu_present() {
  std::error_code ec;
  return std::filesystem::exists("/dev/nvidia0", ec);
}

void ProfileController::on_output(const QByteArray& json) {
  bool ok = false;
  try {
    const BeforeAfterResult r =
        read_before_after(json, tr("output of %1").arg(runner_->command_line()),
                          dir_->filePath(QStringLiteral("before.trace.json")),
                          dir_->filePath(QStringLiteral("after.trace.json")));
    // The child's output is not a file: the report names the file its reproduce
    // commands write it to, as `fxc report` does by default.
    json_ = json;
    origin_ = QStringLiteral("before_after.json");
    emit result_ready(r);
    ok = true;
  } catch (const Error& e) {
    emit failed(tr("Profiling failed"),
                tr("unreadable result: %1").arg(QString::fromUtf8(e.what())));
  }
  dir_.reset();
  emit finished(ok);
}

void ProfileController::on_failed(const QString& message, bool was_cancelled) {
  dir_.reset();
  if (was_cancelled)
    emit cancelled(message);
  else
    emit failed(tr("Profiling failed"), message);
  emit finished(false);
}

bool ProfileController::load_result(const QString& path) {
  try {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
      throw FileError(path.toStdString(), "cannot open: " + f.errorString().toStdString());
    const QByteArray json = f.readAll();
    const BeforeAfterResult r = read_before_after(json, path);
    json_ = json;
    origin_ = path;
    emit result_ready(r);
  } catch (const Error& e) {
    emit failed(tr("Cannot read profile result"), QString::fromUtf8(e.what()));
    return false;
  }
  return true;
}

}  // namespace fx::views
