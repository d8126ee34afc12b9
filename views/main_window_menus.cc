// SPDX-License-Identifier: Apache-2.0
// MainWindow's menus and tool bar: each action calls a public command of the window
// (main_window_commands.cc, main_window_navigation.cc) or asks for a file first.
#include <QActionGroup>
#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>

#include "device/device_presets.h"
#include "util/version.h"
#include "views/candidate_panel.h"
#include "views/document_controller.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/help.h"
#include "views/learn_from_result.h"
#include "views/main_window.h"
#include "views/plan_controller.h"
#include "views/profile_controller.h"
#include "views/timeline_view.h"

namespace fx::views {

void MainWindow::build_menus() {
  build_file_menu();
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  undo_ = edit->addAction(tr("&Undo Decision"), QKeySequence::Undo, this, &MainWindow::undo);
  redo_ = edit->addAction(tr("&Redo Decision"), QKeySequence::Redo, this, &MainWindow::redo);
  edit->addSeparator();
  edit->addAction(tr("&Find…"), QKeySequence::Find, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  edit->addAction(tr("Find &Next"), QKeySequence::FindNext, this, &MainWindow::on_search);
  build_view_menu();
  build_tools_menu();
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&User Guide"), QKeySequence::HelpContents, this,
                  [this] { show_user_guide(this); });
  help->addAction(tr("&Keyboard Shortcuts"), QKeySequence(Qt::CTRL | Qt::Key_Slash), this,
                  [this] { show_shortcuts(this, menuBar()); });
  help->addAction(tr("&Glossary"), this, [this] { show_glossary(this); });
  help->addSeparator();
  help->addAction(tr("&About"), this, [this] {
    QMessageBox::about(this, tr("About Fusion Explorer"),
                       tr("Fusion Explorer %1\nFinds, generates and measures operator fusions in "
                          "ONNX models.")
                           .arg(QString::fromLatin1(kVersion)));
  });
  build_tool_bar();
}

void MainWindow::build_file_menu() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  open_ = file->addAction(
      style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open Model…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open ONNX model"), QString(), tr("ONNX models (*.onnx);;All files (*)"));
        if (!path.isEmpty()) open_model(path);
      });
  open_->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addSeparator();
  auto save_as = [this](const QString& start) {
    const QString p =
        QFileDialog::getSaveFileName(this, tr("Save plan"), start, tr("Plans (*.json)"));
    if (!p.isEmpty()) save_plan(p);
  };
  save_ = file->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save Plan"),
                          this, [this, save_as] {
                            if (!plan_->plan_path().isEmpty())
                              save_plan(plan_->plan_path());
                            else
                              save_as(QString());
                          });
  save_->setShortcut(QKeySequence::Save);
  file->addAction(tr("Save Plan &As…"), QKeySequence::SaveAs, this,
                  [this, save_as] { save_as(plan_->plan_path()); });
  file->addAction(tr("&Load Plan…"), this, [this] {
    const QString p =
        QFileDialog::getOpenFileName(this, tr("Load plan"), QString(), tr("Plans (*.json)"));
    if (!p.isEmpty()) load_plan(p);
  });
  QAction* restore = file->addAction(tr("Restore Autosaved Plan"), this, [this] {
    if (!plan_->restore_autosave())
      statusBar()->showMessage(tr("No autosaved plan for this model"), 5000);
  });
  restore->setObjectName(QStringLiteral("RestoreAutosaveAction"));
  // Say from when before the user picks it.
  connect(file, &QMenu::aboutToShow, this, [this, restore] {
    const QDateTime when = plan_->autosave_time();
    restore->setEnabled(when.isValid());
    restore->setText(
        when.isValid()
            ? tr("Restore Autosaved Plan (%1)").arg(QLocale().toString(when, QLocale::ShortFormat))
            : tr("Restore Autosaved Plan"));
  });
  file->addSeparator();
  file->addAction(tr("&Export View…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export view"), QString(),
                                                   tr("PNG image (*.png);;SVG drawing (*.svg)"));
    if (!p.isEmpty()) export_view(p);
  });
  build_export_menu(file);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::build_export_menu(QMenu* file) {
  QMenu* menu = file->addMenu(tr("E&xport"));
  menu->setObjectName(QStringLiteral("ExportMenu"));
  auto ask = [this](const QString& title, const QString& filter) {
    return QFileDialog::getSaveFileName(this, title, QString(), filter);
  };
  menu->addAction(tr("&Fused Model (ONNX)…"), this, [this, ask] {
    const QString p = ask(tr("Export fused model"), tr("ONNX models (*.onnx)"));
    if (!p.isEmpty()) export_fused_model(p);
  });
  menu->addAction(tr("&Kernels (Sources + Manifest)…"), this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Export kernels to folder"));
    if (!d.isEmpty()) export_kernels(d);
  });
  export_traces_ = menu->addAction(tr("&Chrome Trace of the Timeline…"), this, [this, ask] {
    const QString p = ask(tr("Export Chrome trace"), tr("Chrome traces (*.json)"));
    if (!p.isEmpty()) export_traces(p);
  });
  export_traces_->setObjectName(QStringLiteral("ExportTracesAction"));
  menu->addAction(tr("&Report…"), this, [this, ask] {
    const QString p =
        ask(tr("Export report"), tr("HTML (*.html);;PDF (*.pdf);;Markdown (*.md);;JSON (*.json)"));
    if (!p.isEmpty()) export_report(p);
  });
  // Traces exist only once a timeline is loaded.
  connect(menu, &QMenu::aboutToShow, this,
          [this] { export_traces_->setEnabled(timeline_->lane_count() > 0); });
  export_traces_->setEnabled(false);
}

void MainWindow::build_view_menu() {
  view_menu_ = menuBar()->addMenu(tr("&View"));
  view_menu_->addAction(tr("&Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), view_, &GraphView::fit);
  view_menu_->addAction(tr("Zoom &In"), QKeySequence::ZoomIn, view_,
                        [this] { view_->zoom_by(1.25); });
  view_menu_->addAction(tr("Zoom &Out"), QKeySequence::ZoomOut, view_,
                        [this] { view_->zoom_by(0.8); });
  view_menu_->addAction(tr("&Actual Size"), QKeySequence(Qt::CTRL | Qt::Key_1), view_,
                        &GraphView::zoom_reset);
  view_menu_->addAction(tr("&Collapse All"), this, [this] {
    if (!doc()) return;
    documents_->expansion() = drawing::Expansion(doc()->tree->group_count());
    documents_->relayout();
  });
  constants_as_nodes_ = view_menu_->addAction(
      tr("Constants as &Nodes"), this, [this](bool on) { documents_->set_constants_as_nodes(on); });
  constants_as_nodes_->setCheckable(true);
  constants_as_nodes_->setObjectName(QStringLiteral("ConstantsAsNodesAction"));
  constants_as_nodes_->setToolTip(
      tr("Draw Constant ops as boxes of their own instead of as lines in the box of the op "
         "that uses them (double-click an op that lists constants to show them)"));
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

  side_by_side_ = view_menu_->addAction(tr("&Side by Side: Original | Fused"), this,
                                        [this](bool on) { set_side_by_side(on); });
  side_by_side_->setCheckable(true);
  side_by_side_->setShortcut(QKeySequence(Qt::Key_F7));
  side_by_side_->setObjectName(QStringLiteral("SideBySideAction"));
  side_by_side_->setToolTip(
      tr("Show the fused graph (accepted groups as kernels) beside the original"));
  link_views_ = view_menu_->addAction(tr("&Link Navigation"), this,
                                      [this](bool on) { set_navigation_linked(on); });
  link_views_->setCheckable(true);
  link_views_->setChecked(true);
  link_views_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F7));
  link_views_->setObjectName(QStringLiteral("LinkNavigationAction"));
  link_views_->setToolTip(
      tr("Side by side: zooming or panning one graph moves the other to the same nodes"));
  generate_ = view_menu_->addAction(tr("&Generate Kernel Source"), this, [this] {
    int pg = -1;
    if (doc() && !panel_->selected_ids().isEmpty()) {
      const std::string id = panel_->selected_ids().front().toStdString();
      const auto& gs = doc()->plan.groups();
      for (std::size_t i = 0; i < gs.size(); ++i)
        if (gs[i].id == id) pg = int(i);
    }
    generate(pg);
  });
  generate_->setShortcut(QKeySequence(Qt::Key_F6));
  generate_->setObjectName(QStringLiteral("GenerateAction"));
  view_menu_->addSeparator();
  for (QDockWidget* dock : findChildren<QDockWidget*>())
    view_menu_->addAction(dock->toggleViewAction());
}

void MainWindow::build_tools_menu() {
  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  profile_ = tools->addAction(tr("&Profile Before/After"), QKeySequence(Qt::Key_F9), this,
                              &MainWindow::profile);
  profile_->setObjectName(QStringLiteral("ProfileAction"));
  profile_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  profile_->setToolTip(
      tr("Profile: run the model unfused and with the accepted groups fused (fxc "
         "profile --plan), compare times and outputs (F9)"));
  tools->addAction(tr("&Cancel Profile"), this, &MainWindow::cancel_profile);
  QAction* slower = tools->addAction(tr("&Reject Groups That Measured Slower"), this,
                                     &MainWindow::reject_measured_slower);
  slower->setToolTip(
      tr("After a profile: reject every group whose fused kernel measured slower, "
         "in one undoable step"));
  // Issue 21, "learn from each profile": opt-in, the estimate error before and after.
  QAction* learn = tools->addAction(tr("&Fold Measurement into Calibration"), this, [this] {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const LearnReport r = learn_from_result(profiler_->result_json());
    QApplication::restoreOverrideCursor();
    if (r.ok)
      QMessageBox::information(this, tr("Calibration updated"), r.text);
    else
      show_error(tr("Calibration not updated"), r.text);
  });
  learn->setObjectName(QStringLiteral("LearnAction"));
  learn->setToolTip(
      tr("After a profile: fold its measured groups into this CPU's calibration (as fxc "
         "calibrate --learn) and show the estimate error before and after the update"));
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
}

void MainWindow::build_tool_bar() {
  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName(QStringLiteral("MainToolBar"));
  bar->addAction(open_);
  bar->addAction(save_);
  bar->addAction(profile_);
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
}

}  // namespace fx::views
