// SPDX-License-Identifier: Apache-2.0
#pragma once
// Before/after profiling, without a window: the plan as it is now is saved to a
// temporary file and `fxc profile MODEL --plan PLAN --json --trace-before B
// --trace-after A` (and the explorer's model options: profile_arguments) runs in a child process
// (ProfileRunner: the UI never waits on it, and a crash there stays there); its JSON is read into a
// BeforeAfterResult. Results can also be loaded from a file. The last result's JSON is kept, as fxc
// printed it, so that an exported report includes the measurements like `fxc report --profile`.

#include <QByteArray>
#include <QObject>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

#include "views/before_after_result.h"

namespace fx::views {

struct ModelDocument;
class ProfileRunner;

// The child's arguments: the plan and traces, and the model read as the window read it
// (the dims the user bound, the canonical passes it ran: model_arguments), so that the
// plan's node names are the child's.
QStringList profile_arguments(const ModelDocument& doc, const QString& plan,
                              const QString& trace_before, const QString& trace_after);
// Where the before/after runs: "cuda" when the analysis device is a GPU profile
// ("nvidia-*", "cuda-*") and this machine has a GPU (`gpu_present`, /dev/nvidia0 by
// default), so that the GPU's estimates are checked on the GPU; "cpu" otherwise.
QString profile_run_device(const QString& analysis_device, bool gpu_present);
bool gpu_present();

class ProfileController : public QObject {
  Q_OBJECT
 public:
  explicit ProfileController(QObject* parent = nullptr);
  ~ProfileController() override;

  // The program to run; empty: the fxc built or installed next to this executable, or
  // on PATH (default_program()).
  void set_program(const QString& program) { program_ = program; }
  static QString default_program();
  void set_timeout_ms(int ms);

  // Starts profiling the document's model with its current plan. False (after `failed`
  // and `finished(false)`) when nothing could be started; also false while running.
  bool start(const ModelDocument& doc);
  void cancel();
  bool running() const;
  // Reads a before/after result file; `result_ready` or `failed` follows.
  bool load_result(const QString& path);
  // Forgets the last result (it was measured on another model).
  void clear();

  // The last result shown, as fxc printed it, and the name a report gives it.
  QByteArray result_json() const { return json_; }
  QString result_origin() const { return origin_; }

 signals:
  void started();
  void progress(int value, int maximum, const QString& text);  // maximum 0: unknown
  void result_ready(const fx::views::BeforeAfterResult& result);
  // Once per start(): ok when a result was read.
  void finished(bool ok);
  void failed(const QString& title, const QString& message);
  void cancelled(const QString& message);

 private:
  void on_output(const QByteArray& json);
  void on_failed(const QString& message, bool cancelled);

  ProfileRunner* runner_;
  QString program_;
  std::unique_ptr<QTemporaryDir> dir_;  // plan and traces of the running profile
  QByteArray json_;
  QString origin_;
};

}  // namespace fx::views
