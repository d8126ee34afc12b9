// SPDX-License-Identifier: Apache-2.0
#include "views/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>

#include "analysis/plan_totals.h"
#include "device/device_presets.h"
#include "util/version.h"
#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/code_view.h"
#include "views/dims_panel.h"
#include "views/document_controller.h"
#include "views/export_service.h"
#include "views/fused_graph_pane.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/inspector.h"
#include "views/op_style.h"
#include "views/plan_controller.h"
#include "views/profile_controller.h"
#include "views/profile_summary.h"
#include "views/timeline_view.h"
#include "views/view_sync.h"

namespace fx::views {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      documents_(new DocumentController(this)),
      plan_(new PlanController(this)),
      profiler_(new ProfileController(this)),
      exports_(new ExportService(this)),
      scene_(new GraphScene(this)),
      view_(new GraphView(scene_, this)) {
  setObjectName(QStringLiteral("MainWindow"));
  setAcceptDrops(true);
  build_central();
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  build_docks();
  // Empty panes say why and what to do (issue 23 item 5).
  view_->set_empty_note(
      tr("No model open.\nFile > Open Model… (Ctrl+O), or drop an .onnx file here."));
  inspector_->set_empty_note(
      tr("No model open. Its file, inputs, outputs and fusion figures show here; then the node "
         "or group you select."));
  build_menus();
  build_status_bar();
  connect_documents();
  connect_plan();
  connect_profiler();
  connect_exports();
  connect_selection();
  restore_settings();
  update_title();
  update_status();  // the empty candidate table and the summary say "no model" from the start
}

MainWindow::~MainWindow() {
  // The controllers and the scene are children, deleted after this body: silence them,
  // and let the workers (which hold the document) end while the window is whole.
  scene_->disconnect(this);
  // The views emit viewport_changed while ~QWidget deletes them; the sync must not
  // follow into a half-destroyed view.
  delete sync_;
  sync_ = nullptr;
  for (QObject* c : std::initializer_list<QObject*>{documents_, plan_, profiler_, exports_})
    c->disconnect(this);
  delete exports_;
  delete documents_;
}

std::shared_ptr<ModelDocument> MainWindow::doc() const {
  return documents_->document();
}

void MainWindow::connect_documents() {
  documents_->set_label_metrics(label_metrics(view_->font()));
  documents_->set_outside_readers(
      [this] { return fused_pane_->is_busy() || exports_->worker_running(); });
  connect(documents_, &DocumentController::progress_changed, this, &MainWindow::update_progress);
  connect(documents_, &DocumentController::message, this,
          [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });
  connect(documents_, &DocumentController::failed, this, &MainWindow::show_error);
  connect(documents_, &DocumentController::document_shown, this, &MainWindow::on_document_shown);
  connect(documents_, &DocumentController::layout_ready, this, &MainWindow::on_layout_ready);
  connect(documents_, &DocumentController::document_replaced, this,
          &MainWindow::on_document_replaced);
  connect(documents_, &DocumentController::analysis_about_to_apply, this, [this] {
    plan_->keep_decisions();  // a new device or opt level re-estimates them, never drops them
    candidates_->set_plan(nullptr);
  });
  connect(documents_, &DocumentController::analysis_applied, this, [this] {
    candidates_->set_plan(&doc()->plan);
    plan_->plan_replaced();
    scene_->set_overlay(scene_->overlay());  // the cost model changed with the device
    update_status();
  });
  connect(documents_, &DocumentController::opened, this, [this] {
    inspector_->refresh(*doc());  // with the shape inference figures; the selection stays
    dims_->show_dims(doc()->model, documents_->settings().dims);
    // Assumed dims are in view at once, not behind the Overview tab: they decide what
    // the candidates are.
    if (!doc()->model.assumed_dims.empty())
      if (auto* dock = findChild<QDockWidget*>(QStringLiteral("DimensionsDock"))) dock->raise();
    emit model_opened();
  });
  auto reanalyse = [this] {
    documents_->set_settings(chosen_settings());
    if (doc() && !is_busy()) documents_->reanalyse();
  };
  connect(device_box_, &QComboBox::currentIndexChanged, this, reanalyse);
  connect(level_box_, &QComboBox::currentIndexChanged, this, reanalyse);
  connect(cancel_, &QPushButton::clicked, this, &MainWindow::cancel_jobs);
}

void MainWindow::connect_plan() {
  connect(plan_, &PlanController::changed, this, &MainWindow::on_plan_changed);
  connect(plan_, &PlanController::modified_changed, this, &QWidget::setWindowModified);
  connect(plan_, &PlanController::plan_about_to_be_replaced, this,
          [this] { candidates_->set_plan(nullptr); });
  connect(plan_, &PlanController::plan_loaded, this,
          [this] { candidates_->set_plan(&doc()->plan); });
  connect(plan_, &PlanController::failed, this, &MainWindow::show_error);
  connect(plan_, &PlanController::settings_requested, this, [this](const AnalysisSettings& s) {
    set_analysis_settings(s);
    if (doc() && !is_busy()) documents_->reanalyse();
  });
  connect(plan_, &PlanController::message, this,
          [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });
}

void MainWindow::connect_profiler() {
  connect(profiler_, &ProfileController::started, this, [this] {
    profile_status_->clear();
    profile_progress_->setRange(0, 0);
    show_profile_progress(true);
  });
  connect(profiler_, &ProfileController::progress, this,
          [this](int value, int maximum, const QString& text) {
            profile_progress_->setRange(0, maximum);
            profile_progress_->setValue(value);
            profile_status_->setText(
                profile_status_->fontMetrics().elidedText(text, Qt::ElideMiddle, 320));
            profile_status_->setToolTip(text);
          });
  connect(profiler_, &ProfileController::result_ready, this, &MainWindow::show_profile_result);
  connect(profiler_, &ProfileController::failed, this, &MainWindow::show_error);
  connect(profiler_, &ProfileController::cancelled, this,
          [this](const QString& message) { statusBar()->showMessage(message, 5000); });
  connect(profiler_, &ProfileController::finished, this, [this](bool ok) {
    show_profile_progress(false);
    emit profile_finished(ok);
  });
}

void MainWindow::connect_exports() {
  exports_->set_document_busy([this] { return documents_->is_opening(); });
  connect(exports_, &ExportService::started, this, &MainWindow::update_progress);
  connect(exports_, &ExportService::failed, this, &MainWindow::show_error);
  connect(exports_, &ExportService::finished, this,
          [this](bool ok, const QString& path, const QString& message) {
            update_progress();
            if (ok)
              statusBar()->showMessage(message, 8000);
            else
              show_error(tr("Export failed"), message);
            emit export_finished(ok, path);
          });
  connect(exports_, &ExportService::cancelled, this, [this](const QString& path) {
    update_progress();
    statusBar()->showMessage(tr("Export of %1 cancelled").arg(path), 5000);
    emit export_finished(false, path);
  });
}

AnalysisSettings MainWindow::chosen_settings() const {
  AnalysisSettings s = documents_->settings();  // keeps the dims the user bound
  s.device = device_box_->currentText();
  s.opt_level = level_box_->currentIndex();
  return s;
}

void MainWindow::set_analysis_settings(const AnalysisSettings& s) {
  QSignalBlocker b1(device_box_), b2(level_box_);
  int i = device_box_->findText(s.device);
  if (i < 0) {
    device_box_->addItem(s.device);
    i = device_box_->count() - 1;
  }
  device_box_->setCurrentIndex(i);
  level_box_->setCurrentIndex(std::clamp(s.opt_level, 0, 3));
  documents_->set_settings(chosen_settings());
}

void MainWindow::set_dark(bool dark) {
  dark_ = dark;
  QPalette p = QApplication::style()->standardPalette();
  if (dark) {
    p.setColor(QPalette::Window, QColor(45, 47, 52));
    p.setColor(QPalette::WindowText, QColor(225, 225, 225));
    p.setColor(QPalette::Base, QColor(34, 36, 40));
    p.setColor(QPalette::AlternateBase, QColor(44, 46, 51));
    p.setColor(QPalette::Text, QColor(225, 225, 225));
    p.setColor(QPalette::Button, QColor(52, 54, 60));
    p.setColor(QPalette::ButtonText, QColor(225, 225, 225));
    p.setColor(QPalette::Highlight, QColor(45, 110, 200));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(60, 62, 68));
    p.setColor(QPalette::ToolTipText, QColor(230, 230, 230));
    p.setColor(QPalette::PlaceholderText, QColor(140, 140, 140));
  }
  QApplication::setPalette(p);
  scene_->set_dark(dark);
  fused_pane_->set_dark(dark);
  code_->set_dark(dark);
  if (auto* a = findChild<QAction*>(QStringLiteral("DarkAction"))) a->setChecked(dark);
}

void MainWindow::restore_settings() {
  QSettings s;
  // The first start (nothing saved) takes most of the screen: the graph needs the room.
  if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray()))
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
      const QRect area = screen->availableGeometry();
      resize(area.width() * 9 / 10, area.height() * 9 / 10);
      move(area.center() - rect().center());
    }
  default_dock_sizes_ = !restoreState(s.value(QStringLiteral("window/state")).toByteArray());
  set_dark(s.value(QStringLiteral("view/dark"), false).toBool());
  AnalysisSettings a;
  a.device = s.value(QStringLiteral("analysis/device"), a.device).toString();
  a.opt_level = s.value(QStringLiteral("analysis/opt_level"), a.opt_level).toInt();
  set_analysis_settings(a);
  update_recent_menu();
}

void MainWindow::save_settings() {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  s.setValue(QStringLiteral("window/state"), saveState());
  s.setValue(QStringLiteral("view/dark"), dark_);
  s.setValue(QStringLiteral("analysis/device"), device_box_->currentText());
  s.setValue(QStringLiteral("analysis/opt_level"), level_box_->currentIndex());
}

void MainWindow::add_recent(const QString& path) {
  QSettings s;
  QStringList recent = s.value(QStringLiteral("recent")).toStringList();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > 10) recent.removeLast();
  s.setValue(QStringLiteral("recent"), recent);
  update_recent_menu();
}

void MainWindow::update_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(QStringLiteral("recent")).toStringList();
  for (int i = 0; i < recent.size(); ++i) {
    QAction* a = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(recent[i]), this,
                                         [this, p = recent[i]] { open_model(p); });
    if (i < 9) a->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key(Qt::Key_1 + i)));
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::update_title() {
  const QString name = doc() ? QFileInfo(doc()->path).fileName() : tr("No model");
  setWindowTitle(name + QStringLiteral("[*] — Fusion Explorer"));
}

void MainWindow::update_status() {
  const auto d = doc();
  panel_->set_empty_reason(empty_plan_reason());
  if (!d) {
    stats_->setText(tr("No model — open one with Ctrl+O or drop it here"));
    original_caption_->setText(tr("Original graph"));
    return;
  }
  const Graph& g = d->graph();
  QString text = tr("%1 nodes · %2 params · load %3 ms")
                     .arg(g.node_count())
                     .arg(format_bytes(double(d->parameter_bytes)))
                     .arg(d->load_ms, 0, 'f', 0);
  if (d->analysis) {
    // The current plan's numbers (accepted groups), as the fused view and reports show.
    const PlanTotals t = plan_totals(*d->analysis, d->plan);
    text += tr(" · %1 of %2 groups accepted · kernels %3 → %4 · est. %5 → %6 (%7×) on %8")
                .arg(t.accepted)
                .arg(t.groups)
                .arg(t.kernels_before)
                .arg(t.kernels_after)
                .arg(format_seconds(t.time_before_s))
                .arg(format_seconds(t.time_after_s))
                .arg(t.speedup(), 0, 'f', 2)
                .arg(QString::fromStdString(d->analysis->device));
  } else if (!d->analysis_error.isEmpty()) {
    text += tr(" · no analysis (see the message)");
  }
  stats_->setText(text);
  original_caption_->setText(tr("Original graph — %1 nodes").arg(g.node_count()));
}

QString MainWindow::empty_plan_reason() const {
  const auto d = doc();
  if (!d) return tr("No model open: File > Open Model (Ctrl+O), or drop an .onnx file here.");
  if (!d->analysis_error.isEmpty())
    return tr("No analysis: %1").arg(d->analysis_error.section(QLatin1Char('\n'), 0, 0));
  if (!d->analysis) return tr("Analysing…");
  if (d->analysis->opt_level == 0)
    return tr("Opt level 0 turns fusion off: choose level 1, 2 or 3 in the tool bar.");
  // Control flow: the bodies are analysed on their own; their groups are not the plan's.
  std::size_t body_groups = 0;
  auto count = [&](const AnalysisResult& r, auto&& self) -> void {
    for (const auto& sa : r.subgraphs) {
      body_groups += sa.result.groups.size();
      self(sa.result, self);
    }
  };
  count(*d->analysis, count);
  if (body_groups > 0)
    return tr("No group in the model's main graph on %1 at opt level %2; %3 group(s) were found "
              "inside its If/Loop/Scan bodies, which are analysed on their own and not in the "
              "plan (fxc analyze lists them under Subgraphs).")
        .arg(QString::fromStdString(d->analysis->device))
        .arg(d->analysis->opt_level)
        .arg(body_groups);
  if (d->analysis->unknown_cost_nodes > 0)
    return tr("No groups: %1 nodes have shapes the analysis could not infer, and a group needs "
              "static shapes. Bind the model's symbolic dimensions in the Dimensions dock.")
        .arg(d->analysis->unknown_cost_nodes);
  return tr("The analysis found no group worth fusing on %1 at opt level %2.")
      .arg(QString::fromStdString(d->analysis->device))
      .arg(d->analysis->opt_level);
}

void MainWindow::update_progress() {
  DocumentController::Progress p = documents_->progress();
  if (exports_->running()) p = {true, tr("Exporting %1…").arg(exports_->what()), 0, 0};
  progress_->setVisible(p.visible);
  cancel_->setVisible(p.visible);  // every job of the bar can be cancelled
  if (!p.visible) return;
  progress_->setRange(0, p.maximum);
  progress_->setValue(p.value);
  progress_->setFormat(p.text.isEmpty() ? QStringLiteral("%p%") : p.text);
}

bool MainWindow::is_busy() const {
  return documents_->is_busy();
}

void MainWindow::cancel_jobs() {
  documents_->cancel();
  exports_->cancel();
  code_->cancel();
}

QString error_headline(const QString& message) {
  // The first paragraph's first line: a sentence written for the reader. Command
  // lines, paths and a child's output come after a blank line.
  QString head = message.section(QStringLiteral("\n\n"), 0, 0).section(QLatin1Char('\n'), 0, 0);
  head = head.trimmed();
  if (head.size() > 200) head = head.left(199) + QStringLiteral("…");
  return head;
}

void MainWindow::show_error(const QString& title, const QString& message) {
  last_error_ = message;
  emit failed(message);
  const QString head = error_headline(message);
  statusBar()->showMessage(head, 10'000);
  // Nothing open (the model did not open): the empty graph says why, until the next one.
  if (!doc())
    view_->set_empty_note(
        tr("%1\n\nFile > Open Model… (Ctrl+O) to choose another file.").arg(head));
  // Offscreen runs (tests, screenshots) have nobody to click OK.
  if (QGuiApplication::platformName() != QLatin1String("offscreen")) {
    QMessageBox box(QMessageBox::Warning, title, head, QMessageBox::Ok, this);
    if (head != message.trimmed()) box.setDetailedText(message);  // behind "Show Details…"
    box.exec();
  }
}

bool MainWindow::maybe_save() {
  if (!isWindowModified()) return true;
  const auto answer = QMessageBox::question(
      this, tr("Unsaved plan"), tr("The fusion plan has unsaved decisions. Save them?"),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) {
    QString p = plan_->plan_path();
    if (p.isEmpty())
      p = QFileDialog::getSaveFileName(this, tr("Save plan"), QString(), tr("Plans (*.json)"));
    return !p.isEmpty() && save_plan(p);
  }
  return true;
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (!default_dock_sizes_) return;
  default_dock_sizes_ = false;
  // Sized at construction, the docks grow with the window as much as the graph does;
  // at its first real size the graph gets about two thirds of the height.
  // After the layout has taken the window's size (the event loop's next turn).
  QTimer::singleShot(0, this, [this] {
    if (auto* table = findChild<QDockWidget*>(QStringLiteral("CandidatesDock")))
      resizeDocks({table}, {std::max(180, height() * 3 / 10)}, Qt::Vertical);
  });
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!maybe_save()) {
    event->ignore();
    return;
  }
  save_settings();
  documents_->cancel();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) open_model(urls.front().toLocalFile());
}

}  // namespace fx::views
