// MainWindow's profiling: the current plan is saved to a temporary file and
// `fxc profile MODEL --plan PLAN --json --trace-before B --trace-after A` runs in a child
// process (ProfileRunner: the UI never waits on it, and a crash there stays there);
// its JSON fills the before/after timeline and the summary. Results and traces can
// also be loaded from files.
#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>

#include "profile/chrome_trace.h"
#include "util/error.h"
#include "views/before_after_result.h"
#include "views/main_window.h"
#include "views/profile_runner.h"
#include "views/profile_summary.h"
#include "views/timeline_view.h"

namespace fx::views {

void MainWindow::build_profile_docks(QDockWidget* tabify_with) {
  timeline_ = new TimelineView(this);
  profile_summary_ = new ProfileSummary(this);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(timeline_);
  split->addWidget(profile_summary_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* dock = new QDockWidget(tr("Before/after profile"), this);
  dock->setObjectName(QStringLiteral("TimelineDock"));
  dock->setWidget(split);
  addDockWidget(Qt::BottomDockWidgetArea, dock);
  if (tabify_with) tabifyDockWidget(tabify_with, dock);
  connect(timeline_, &TimelineView::kernel_clicked, this, &MainWindow::select_nodes);
  connect(profile_summary_, &ProfileSummary::group_activated, this, &MainWindow::select_nodes);

  // Own progress widgets: a profile runs for minutes beside open/layout jobs.
  profile_status_ = new QLabel(this);
  profile_status_->setMaximumWidth(320);
  profile_progress_ = new QProgressBar(this);
  profile_progress_->setMaximumWidth(160);
  profile_cancel_ = new QPushButton(tr("Cancel Profile"), this);
  for (QWidget* w :
       {static_cast<QWidget*>(profile_status_), static_cast<QWidget*>(profile_progress_),
        static_cast<QWidget*>(profile_cancel_)}) {
    statusBar()->addPermanentWidget(w);
    w->hide();
  }
  connect(profile_cancel_, &QPushButton::clicked, this, &MainWindow::cancel_profile);

  profile_runner_ = new ProfileRunner(this);
  connect(profile_runner_, &ProfileRunner::progress, this,
          [this](int value, int maximum, const QString& text) {
            profile_progress_->setRange(0, maximum);
            profile_progress_->setValue(value);
            profile_status_->setText(
                profile_status_->fontMetrics().elidedText(text, Qt::ElideMiddle, 320));
            profile_status_->setToolTip(text);
          });
  connect(profile_runner_, &ProfileRunner::succeeded, this, &MainWindow::on_profile_output);
  connect(profile_runner_, &ProfileRunner::failed, this, &MainWindow::on_profile_failed);
}

QAction* MainWindow::build_profile_actions(QMenu* tools) {
  QAction* run = tools->addAction(tr("&Profile Before/After"), QKeySequence(Qt::Key_F9), this,
                                  &MainWindow::profile);
  run->setObjectName(QStringLiteral("ProfileAction"));
  run->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  run->setToolTip(
      tr("Profile: run the model unfused and with the accepted groups fused (fxc "
         "profile --plan), compare times and outputs (F9)"));
  tools->addAction(tr("&Cancel Profile"), this, &MainWindow::cancel_profile);
  tools->addSeparator();
  tools->addAction(tr("&Load Before/After Result…"), this, [this] {
    const QString p = QFileDialog::getOpenFileName(
        this, tr("Load before/after result"), QString(),
        tr("fxc profile --plan --json output (*.json);;All files (*)"));
    if (!p.isEmpty()) load_profile_result(p);
  });
  tools->addAction(tr("Load &Trace as a Lane…"), this, [this] {
    const QString p = QFileDialog::getOpenFileName(
        this, tr("Load trace"), QString(),
        tr("Chrome trace or ONNX Runtime profile (*.json);;All files (*)"));
    if (!p.isEmpty()) load_timeline(p, QFileInfo(p).completeBaseName());
  });
  return run;
}

QString MainWindow::default_profiler() const {
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

void MainWindow::set_profile_timeout_ms(int ms) {
  profile_runner_->set_timeout_ms(ms);
}

bool MainWindow::profile_running() const {
  return profile_runner_->running();
}

void MainWindow::profile() {
  if (!doc_) {
    show_error(tr("Cannot profile"), tr("Open a model first"));
    emit profile_finished(false);
    return;
  }
  if (profile_running()) return;
  const QString program = profiler_.isEmpty() ? default_profiler() : profiler_;
  if (program.isEmpty()) {
    show_error(tr("Cannot profile"), tr("fxc was not found next to fusion-explorer or on PATH"));
    emit profile_finished(false);
    return;
  }
  profile_dir_ = std::make_unique<QTemporaryDir>();
  const QString plan = profile_dir_->filePath(QStringLiteral("plan.json"));
  try {
    if (!profile_dir_->isValid()) throw Error("cannot create a temporary directory");
    doc_->plan.save(plan.toStdString());  // the plan as it is now, saved or not
  } catch (const Error& e) {
    show_error(tr("Cannot profile"), QString::fromUtf8(e.what()));
    emit profile_finished(false);
    return;
  }
  profile_status_->clear();
  profile_progress_->setRange(0, 0);
  for (QWidget* w :
       {static_cast<QWidget*>(profile_status_), static_cast<QWidget*>(profile_progress_),
        static_cast<QWidget*>(profile_cancel_)})
    w->show();
  profile_runner_->start(program, {QStringLiteral("profile"), doc_->path, QStringLiteral("--plan"),
                                   plan, QStringLiteral("--json"), QStringLiteral("--trace-before"),
                                   profile_dir_->filePath(QStringLiteral("before.trace.json")),
                                   QStringLiteral("--trace-after"),
                                   profile_dir_->filePath(QStringLiteral("after.trace.json"))});
}

void MainWindow::cancel_profile() {
  profile_runner_->cancel();
}

void MainWindow::on_profile_output(const QByteArray& json) {
  for (QWidget* w :
       {static_cast<QWidget*>(profile_status_), static_cast<QWidget*>(profile_progress_),
        static_cast<QWidget*>(profile_cancel_)})
    w->hide();
  bool ok = false;
  try {
    const BeforeAfterResult r =
        read_before_after(json, tr("output of %1").arg(profile_runner_->command_line()),
                          profile_dir_->filePath(QStringLiteral("before.trace.json")),
                          profile_dir_->filePath(QStringLiteral("after.trace.json")));
    show_profile_result(r);
    // The child's output is not a file: the report names the file its reproduce
    // commands write it to, as `fxc report` does by default.
    profile_json_ = json;
    profile_json_origin_ = QStringLiteral("before_after.json");
    ok = true;
  } catch (const Error& e) {
    show_error(tr("Profiling failed"),
               tr("unreadable result: %1").arg(QString::fromUtf8(e.what())));
  }
  profile_dir_.reset();
  emit profile_finished(ok);
}

void MainWindow::on_profile_failed(const QString& message, bool cancelled) {
  for (QWidget* w :
       {static_cast<QWidget*>(profile_status_), static_cast<QWidget*>(profile_progress_),
        static_cast<QWidget*>(profile_cancel_)})
    w->hide();
  profile_dir_.reset();
  if (cancelled)
    statusBar()->showMessage(message, 5000);
  else
    show_error(tr("Profiling failed"), message);
  emit profile_finished(false);
}

void MainWindow::show_profile_result(const BeforeAfterResult& r) {
  timeline_->clear();
  QStringList names;
  for (int i = 0; i < int(r.input.groups.size()); ++i) names << r.group_label(i);
  timeline_->set_group_names(names);
  timeline_->set_lane(r.before_laid_end_to_end ? tr("before*") : tr("before"), r.before);
  timeline_->set_lane(r.after_laid_end_to_end ? tr("after*") : tr("after"), r.after);
  profile_summary_->set_result(r);
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("TimelineDock"))) {
    dock->show();
    dock->raise();
    // Two lanes and the summary need room: give the dock half the window when it is
    // smaller (the user's own larger size is kept).
    if (!dock->isFloating() && dock->height() < height() / 2)
      resizeDocks({dock}, {height() / 2}, Qt::Vertical);
  }
  QString msg = tr("Profiled: speed-up %1").arg(format_speedup(r.input.speedup));
  if (r.before_laid_end_to_end || r.after_laid_end_to_end)
    msg += tr(" (* no trace: kernels laid end to end by median time)");
  if (!r.warnings.isEmpty()) msg += tr("; %1").arg(r.warnings.join(QStringLiteral("; ")));
  statusBar()->showMessage(msg, 15'000);
}

bool MainWindow::load_profile_result(const QString& path) {
  try {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
      throw FileError(path.toStdString(), "cannot open: " + f.errorString().toStdString());
    const QByteArray json = f.readAll();
    show_profile_result(read_before_after(json, path));
    profile_json_ = json;
    profile_json_origin_ = path;
  } catch (const Error& e) {
    show_error(tr("Cannot read profile result"), QString::fromUtf8(e.what()));
    return false;
  }
  return true;
}

bool MainWindow::load_timeline(const QString& path, const QString& lane_title) {
  try {
    timeline_->set_lane(lane_title, read_trace(path.toStdString()));
  } catch (const Error& e) {
    show_error(tr("Cannot read timeline"), QString::fromUtf8(e.what()));
    return false;
  }
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("TimelineDock"))) dock->raise();
  statusBar()->showMessage(timeline_->summary(), 10'000);
  return true;
}

void MainWindow::select_nodes(const QStringList& names) {
  if (!doc_ || names.isEmpty()) return;
  const NodeId first = doc_->graph().find_node(names.front().toStdString());
  if (first == kNoNode) {
    statusBar()->showMessage(tr("%1 is not a node of this model").arg(names.front()), 5000);
    return;
  }
  // A kernel covering several nodes of one plan group: show the group (its hull, the
  // inspector's breakdown); otherwise the node itself.
  const int group = doc_->group_of_node(first);
  if (names.size() > 1 && group >= 0) {
    select_fusion_group(group);
    return;
  }
  reveal_node(first);
}

}  // namespace fx::views
