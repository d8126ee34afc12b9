#include "views/main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include "device/device_presets.h"
#include "util/version.h"
#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/code_view.h"
#include "views/fused_graph_pane.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/inspector.h"
#include "views/op_style.h"
#include "views/timeline_view.h"

namespace fx::views {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), scene_(new GraphScene(this)), view_(new GraphView(scene_, this)) {
  setObjectName(QStringLiteral("MainWindow"));
  setAcceptDrops(true);
  // Original graph on the left; the fused graph beside it when side-by-side is on.
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("GraphSplitter"));
  // The original view carries a caption like the fused pane's, shown only side by side
  // so that the two panes say which is which.
  auto* original = new QWidget(split);
  original_caption_ = new QLabel(tr("Original graph"), original);
  original_caption_->setObjectName(QStringLiteral("OriginalCaption"));
  original_caption_->setContentsMargins(6, 2, 6, 2);
  original_caption_->hide();
  auto* original_box = new QVBoxLayout(original);
  original_box->setContentsMargins(0, 0, 0, 0);
  original_box->setSpacing(0);
  original_box->addWidget(original_caption_);
  original_box->addWidget(view_, 1);
  split->addWidget(original);
  fused_pane_ = new FusedGraphPane(split);
  split->addWidget(fused_pane_);
  split->setChildrenCollapsible(false);
  fused_pane_->hide();
  setCentralWidget(split);
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  autosave_dir_ = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                  QStringLiteral("/autosave");
  build_docks();
  build_actions();

  stats_ = new QLabel(tr("No model"), this);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(220);
  progress_->setTextVisible(true);
  cancel_ = new QPushButton(tr("Cancel"), this);
  statusBar()->addWidget(stats_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  hide_progress();
  connect(cancel_, &QPushButton::clicked, this, &MainWindow::cancel_jobs);

  connect(&open_job_, &QFutureWatcherBase::finished, this, &MainWindow::on_open_finished);
  connect(&layout_job_, &QFutureWatcherBase::finished, this, &MainWindow::on_layout_finished);
  connect(&analysis_job_, &QFutureWatcherBase::finished, this, &MainWindow::on_analysis_finished);
  connect(&types_job_, &QFutureWatcherBase::finished, this, &MainWindow::on_types_finished);
  connect(&open_job_, &QFutureWatcherBase::progressValueChanged, this, [this](int v) {
    show_progress(open_job_.progressText(), v, open_job_.progressMaximum());
  });

  connect(scene_, &GraphScene::node_selected, this, [this](NodeId n) {
    inspector_->show_node(*doc_, n);
    const int g = doc_->group_of_node(n);
    panel_->select_plan_group(g);
  });
  connect(scene_, &GraphScene::group_box_selected, this,
          [this](int g) { inspector_->show_scope_group(*doc_, g); });
  connect(scene_, &GraphScene::fusion_group_selected, this, [this](int pg) {
    inspector_->show_fusion_group(*doc_, pg);
    panel_->select_plan_group(pg);
  });
  connect(scene_, &GraphScene::toggle_requested, this, &MainWindow::toggle_group);
  connect(scene_, &GraphScene::nothing_selected, this, [this] {
    if (doc_) inspector_->show_model(*doc_);
  });

  autosave_timer_ = new QTimer(this);
  autosave_timer_->setInterval(30'000);
  connect(autosave_timer_, &QTimer::timeout, this, &MainWindow::autosave);
  autosave_timer_->start();

  restore_settings();
  update_title();
}

MainWindow::~MainWindow() {
  // The scene outlives doc_ (it is a child, deleted after the members): silence it.
  scene_->disconnect(this);
  cancel_jobs();
  // Workers hold the document and the layout engine: let them end before both go.
  open_job_.waitForFinished();
  layout_job_.waitForFinished();
  analysis_job_.waitForFinished();
  types_job_.waitForFinished();
}

void MainWindow::build_docks() {
  inspector_ = new Inspector(this);
  auto* inspector_dock = new QDockWidget(tr("Inspector"), this);
  inspector_dock->setObjectName(QStringLiteral("InspectorDock"));
  inspector_dock->setWidget(inspector_);
  addDockWidget(Qt::RightDockWidgetArea, inspector_dock);

  minimap_ = new Minimap(scene_, view_, this);
  auto* minimap_dock = new QDockWidget(tr("Overview"), this);
  minimap_dock->setObjectName(QStringLiteral("OverviewDock"));
  minimap_dock->setWidget(minimap_);
  addDockWidget(Qt::RightDockWidgetArea, minimap_dock);

  candidates_ = new CandidateModel(this);
  panel_ = new CandidatePanel(candidates_, this);
  auto* table_dock = new QDockWidget(tr("Fusion candidates"), this);
  table_dock->setObjectName(QStringLiteral("CandidatesDock"));
  table_dock->setWidget(panel_);
  addDockWidget(Qt::BottomDockWidgetArea, table_dock);
  build_profile_docks(table_dock);  // timeline + profile summary (main_window_profile.cc)
  table_dock->raise();
  resizeDocks({inspector_dock, minimap_dock}, {420, 200}, Qt::Vertical);
  resizeDocks({inspector_dock}, {360}, Qt::Horizontal);
  resizeDocks({table_dock}, {230}, Qt::Vertical);

  code_ = new CodeDock(this);
  auto* code_dock = new QDockWidget(tr("Generate"), this);
  code_dock->setObjectName(QStringLiteral("GenerateDock"));
  code_dock->setWidget(code_);
  addDockWidget(Qt::BottomDockWidgetArea, code_dock);
  tabifyDockWidget(table_dock, code_dock);
  table_dock->raise();

  connect(panel_, &CandidatePanel::group_activated, this, &MainWindow::select_fusion_group);
  connect(panel_, &CandidatePanel::accept_requested, this, &MainWindow::accept_groups);
  connect(panel_, &CandidatePanel::reject_requested, this, &MainWindow::reject_groups);
  connect(panel_, &CandidatePanel::reset_requested, this, &MainWindow::reset_groups);
  connect(panel_, &CandidatePanel::accept_above_requested, this, &MainWindow::accept_above);
}

void MainWindow::build_actions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(
      style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open Model…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open ONNX model"), QString(), tr("ONNX models (*.onnx);;All files (*)"));
        if (!path.isEmpty()) open_model(path);
      });
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addSeparator();
  QAction* save = file->addAction(
      style()->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save Plan"), this, [this] {
        if (!plan_path_.isEmpty())
          save_plan(plan_path_);
        else {
          const QString p =
              QFileDialog::getSaveFileName(this, tr("Save plan"), QString(), tr("Plans (*.json)"));
          if (!p.isEmpty()) save_plan(p);
        }
      });
  save->setShortcut(QKeySequence::Save);
  file->addAction(
      tr("Save Plan &As…"), this,
      [this] {
        const QString p =
            QFileDialog::getSaveFileName(this, tr("Save plan"), plan_path_, tr("Plans (*.json)"));
        if (!p.isEmpty()) save_plan(p);
      },
      QKeySequence::SaveAs);
  file->addAction(tr("&Load Plan…"), this, [this] {
    const QString p =
        QFileDialog::getOpenFileName(this, tr("Load plan"), QString(), tr("Plans (*.json)"));
    if (!p.isEmpty()) load_plan(p);
  });
  file->addAction(tr("Restore Autosaved Plan"), this, [this] {
    if (QFileInfo::exists(autosave_path())) load_plan(autosave_path());
  });
  file->addSeparator();
  file->addAction(
      tr("&Export View…"), this,
      [this] {
        const QString p = QFileDialog::getSaveFileName(
            this, tr("Export view"), QString(), tr("PNG image (*.png);;SVG drawing (*.svg)"));
        if (!p.isEmpty()) export_view(p);
      },
      QKeySequence(Qt::CTRL | Qt::Key_E));
  build_export_menu(file);
  file->addSeparator();
  file->addAction(tr("&Quit"), this, &QWidget::close, QKeySequence::Quit);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  undo_ = edit->addAction(tr("&Undo Decision"), this, &MainWindow::undo, QKeySequence::Undo);
  redo_ = edit->addAction(tr("&Redo Decision"), this, &MainWindow::redo, QKeySequence::Redo);
  edit->addSeparator();
  edit->addAction(
      tr("&Find…"), this,
      [this] {
        search_->setFocus();
        search_->selectAll();
      },
      QKeySequence::Find);
  edit->addAction(tr("Find &Next"), this, &MainWindow::on_search, QKeySequence::FindNext);

  view_menu_ = menuBar()->addMenu(tr("&View"));
  view_menu_->addAction(tr("&Fit"), view_, &GraphView::fit, QKeySequence(Qt::CTRL | Qt::Key_0));
  view_menu_->addAction(
      tr("Zoom &In"), view_, [this] { view_->zoom_by(1.25); }, QKeySequence::ZoomIn);
  view_menu_->addAction(
      tr("Zoom &Out"), view_, [this] { view_->zoom_by(0.8); }, QKeySequence::ZoomOut);
  view_menu_->addAction(tr("&Actual Size"), view_, &GraphView::zoom_reset,
                        QKeySequence(Qt::CTRL | Qt::Key_1));
  view_menu_->addAction(tr("&Collapse All"), this, [this] {
    if (!doc_) return;
    expansion_ = layout::Expansion(doc_->tree->group_count());
    start_layout();
  });
  view_menu_->addSeparator();
  QMenu* overlay = view_menu_->addMenu(tr("Colour &Nodes By"));
  auto* group = new QActionGroup(this);
  const std::pair<QString, Overlay> overlays[] = {{tr("Op kind"), Overlay::None},
                                                  {tr("Bytes moved"), Overlay::Bytes},
                                                  {tr("FLOPs"), Overlay::Flops}};
  for (const auto& [name, kind] : overlays) {
    QAction* a = overlay->addAction(name, this, [this, k = kind] {
      scene_->set_overlay(k);
      view_->viewport()->update();
    });
    a->setCheckable(true);
    a->setChecked(kind == Overlay::None);
    group->addAction(a);
  }
  QAction* dark =
      view_menu_->addAction(tr("&Dark Palette"), this, [this](bool on) { set_dark(on); });
  dark->setCheckable(true);
  dark->setObjectName(QStringLiteral("DarkAction"));
  view_menu_->addSeparator();
  QToolBar* bar = addToolBar(tr("Main"));
  build_fused_actions(view_menu_, nullptr);
  view_menu_->addSeparator();
  for (QDockWidget* dock : findChildren<QDockWidget*>())
    view_menu_->addAction(dock->toggleViewAction());

  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  QAction* profile_action = build_profile_actions(tools);  // main_window_profile.cc

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About"), this, [this] {
    QMessageBox::about(this, tr("About Fusion Explorer"),
                       tr("Fusion Explorer %1\nFinds, generates and measures operator fusions in "
                          "ONNX models.")
                           .arg(QString::fromLatin1(kVersion)));
  });

  bar->setObjectName(QStringLiteral("MainToolBar"));
  bar->addAction(open);
  bar->addAction(save);
  bar->addAction(profile_action);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" Device "), bar));
  device_box_ = new QComboBox(bar);
  for (const auto& name : device_preset_names()) device_box_->addItem(QString::fromStdString(name));
  device_box_->setToolTip(tr("Device profile the estimates are made for"));
  bar->addWidget(device_box_);
  bar->addWidget(new QLabel(tr(" Opt level "), bar));
  level_box_ = new QComboBox(bar);
  level_box_->addItems(
      {tr("0 off"), tr("1 patterns"), tr("2 auto vertical"), tr("3 + horizontal")});
  level_box_->setCurrentIndex(2);
  bar->addWidget(level_box_);
  bar->addSeparator();
  search_ = new QLineEdit(bar);
  search_->setPlaceholderText(tr("Find node or op type (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  search_->setMaximumWidth(280);
  bar->addWidget(search_);
  connect(search_, &QLineEdit::returnPressed, this, &MainWindow::on_search);
  bar->addSeparator();
  bar->addAction(side_by_side_);
  bar->addAction(link_views_);
  bar->addAction(generate_);
  auto reanalyze = [this] {
    if (doc_ && !is_busy()) start_analysis();
  };
  connect(device_box_, &QComboBox::currentIndexChanged, this, reanalyze);
  connect(level_box_, &QComboBox::currentIndexChanged, this, reanalyze);
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
  restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(s.value(QStringLiteral("window/state")).toByteArray());
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
  const QString name = doc_ ? QFileInfo(doc_->path).fileName() : tr("No model");
  setWindowTitle(name + QStringLiteral("[*] — Fusion Explorer"));
}

void MainWindow::update_status() {
  if (!doc_) {
    stats_->setText(tr("No model — open one with Ctrl+O or drop it here"));
    original_caption_->setText(tr("Original graph"));
    return;
  }
  const Graph& g = doc_->graph();
  QString text = tr("%1 nodes · %2 params · %3 groups shown · load %4 ms")
                     .arg(g.node_count())
                     .arg(format_bytes(double(doc_->parameter_bytes)))
                     .arg(scene_->box_count())
                     .arg(doc_->load_ms, 0, 'f', 0);
  if (doc_->analysis) {
    const auto& a = *doc_->analysis;
    text += tr(" · %1 candidates · kernels %2 → %3 · est. %4 → %5 on %6")
                .arg(doc_->plan.groups().size())
                .arg(a.kernels_before)
                .arg(a.kernels_after)
                .arg(format_seconds(a.time_before_s))
                .arg(format_seconds(a.time_after_s))
                .arg(QString::fromStdString(a.device));
  } else if (!doc_->analysis_error.isEmpty()) {
    text += tr(" · no analysis: %1").arg(doc_->analysis_error);
  }
  stats_->setText(text);
  original_caption_->setText(tr("Original graph — %1 nodes").arg(g.node_count()));
}

void MainWindow::show_error(const QString& title, const QString& message) {
  last_error_ = message;
  emit failed(message);
  statusBar()->showMessage(message, 10'000);
  // Offscreen runs (tests, screenshots) have nobody to click OK.
  if (QGuiApplication::platformName() != QLatin1String("offscreen"))
    QMessageBox::warning(this, title, message);
}

bool MainWindow::maybe_save() {
  if (!isWindowModified()) return true;
  const auto answer = QMessageBox::question(
      this, tr("Unsaved plan"), tr("The fusion plan has unsaved decisions. Save them?"),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) {
    QString p = plan_path_;
    if (p.isEmpty())
      p = QFileDialog::getSaveFileName(this, tr("Save plan"), QString(), tr("Plans (*.json)"));
    return !p.isEmpty() && save_plan(p);
  }
  return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!maybe_save()) {
    event->ignore();
    return;
  }
  save_settings();
  cancel_jobs();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) open_model(urls.front().toLocalFile());
}

void MainWindow::on_search() {
  if (!doc_) return;
  const QString text = search_->text().trimmed();
  if (text != search_text_) {
    search_text_ = text;
    search_hits_ = scene_->search(text);
    search_pos_ = 0;
  }
  if (search_hits_.empty()) {
    statusBar()->showMessage(text.isEmpty() ? QString() : tr("No node matches “%1”").arg(text),
                             5000);
    return;
  }
  const NodeId n = search_hits_[search_pos_ % search_hits_.size()];
  statusBar()->showMessage(
      tr("Match %1 of %2").arg(search_pos_ % search_hits_.size() + 1).arg(search_hits_.size()),
      5000);
  ++search_pos_;
  reveal_node(n);
}

}  // namespace fx::views
