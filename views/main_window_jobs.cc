// MainWindow's background work: opening a model, re-running the analysis, laying out
// after an expand. Each job captures what it needs by value (the document by shared
// pointer), runs in the global thread pool, and hands a finished result back to the
// UI thread, which only builds items from it. A result for a document that is no
// longer shown is dropped.
#include <QComboBox>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QLabel>
#include <QProgressBar>
#include <QPromise>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <spdlog/spdlog.h>

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "views/candidate_model.h"
#include "views/candidate_panel.h"
#include "views/code_view.h"
#include "views/fused_graph_pane.h"
#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/inspector.h"
#include "views/main_window.h"
#include "views/op_style.h"
#include "views/profile_summary.h"
#include "views/timeline_view.h"

namespace fx::views {
namespace {

// The rest of an opening (shapes, analysis) is background work once the graph is on
// screen: run it at a lower CPU priority than the UI thread so that, on a busy
// machine, the event loop is not starved by its own workers. Only jobs of
// background_pool_ call it: its threads stay background threads.
void background_priority() {
#ifdef __linux__
  setpriority(PRIO_PROCESS, pid_t(gettid()), 5);
#endif
}

}  // namespace

struct MainWindow::OpenResult {
  std::shared_ptr<ModelDocument> doc;
  std::shared_ptr<layout::SceneLayout> layout;
  layout::Expansion expansion;
  QString error;
};

bool MainWindow::is_busy() const {
  return open_job_.isRunning() || layout_job_.isRunning() || analysis_job_.isRunning() || opening_;
}

void MainWindow::cancel_jobs() {
  if (open_job_.isRunning()) open_job_.cancel();
  layout_pending_ = false;
  hide_progress();
}

void MainWindow::show_progress(const QString& text, int value, int maximum) {
  progress_->setRange(0, maximum);
  progress_->setValue(value);
  progress_->setFormat(text.isEmpty() ? QStringLiteral("%p%") : text);
  progress_->show();
  cancel_->setVisible(open_job_.isRunning());
}

void MainWindow::hide_progress() {
  // The rest of an opening still running in the background keeps the bar.
  if (opening_ && (types_job_.isRunning() || types_)) {
    show_progress(tr("Inferring shapes…"), 0, 0);
    return;
  }
  if (analysis_job_.isRunning()) {
    show_progress(tr("Finding fusions…"), 0, 0);
    return;
  }
  progress_->hide();
  cancel_->hide();
}

void MainWindow::open_model(const QString& given) {
  if (!maybe_save()) return;
  const QString path = QFileInfo(given).absoluteFilePath();
  cancel_jobs();
  AnalysisSettings settings;
  settings.device = device_box_->currentText();
  settings.opt_level = level_box_->currentIndex();
  const layout::LabelMetrics metrics = label_metrics(view_->font());
  show_progress(open_step_text(OpenStep::Parsing), 0, int(OpenStep::Done));
  statusBar()->showMessage(tr("Opening %1…").arg(path));
  open_job_.setFuture(QtConcurrent::run([path, settings,
                                         metrics](QPromise<std::shared_ptr<OpenResult>>& promise) {
    auto res = std::make_shared<OpenResult>();
    promise.setProgressRange(0, int(OpenStep::Done));
    try {
      OpenCallbacks cb;
      cb.step = [&](OpenStep s) { promise.setProgressValueAndText(int(s), open_step_text(s)); };
      cb.cancelled = [&] { return promise.isCanceled(); };
      res->doc = open_document(path, settings, metrics, cb);
      if (res->doc && !promise.isCanceled()) {
        promise.setProgressValueAndText(int(OpenStep::Layout), open_step_text(OpenStep::Layout));
        res->expansion = layout::initial_expansion(*res->doc->tree);
        res->layout =
            std::make_shared<layout::SceneLayout>(res->doc->layout->compute(res->expansion));
      }
    } catch (const std::exception& e) {
      res->doc.reset();
      res->error = QString::fromUtf8(e.what());
    }
    promise.addResult(res);
  }));
}

void MainWindow::on_open_finished() {
  hide_progress();
  if (open_job_.future().isCanceled() || open_job_.future().resultCount() == 0) {
    statusBar()->showMessage(tr("Opening cancelled"), 5000);
    return;
  }
  std::shared_ptr<OpenResult> res = open_job_.result();
  if (!res->doc || !res->layout) {
    show_error(tr("Cannot open model"), res->error);
    return;
  }
  doc_ = res->doc;
  opening_ = true;
  types_.reset();
  expansion_ = res->expansion;
  plan_path_.clear();
  search_text_.clear();
  search_hits_.clear();
  scene_->set_document(doc_);
  scene_->show_layout(*res->layout);
  view_->show_start();
  candidates_->set_plan(&doc_->plan);
  inspector_->show_model(*doc_);
  code_->clear();
  // A before/after result was measured on the previous model: never show it, or put it
  // in a report, for this one.
  if (profile_running()) cancel_profile();
  profile_json_.clear();
  profile_json_origin_.clear();
  timeline_->clear();
  profile_summary_->clear();
  add_recent(doc_->path);
  setWindowModified(false);
  update_title();
  plan_changed(false);
  update_status();
  statusBar()->showMessage(tr("Shown in %1 ms (layout %2 ms); inferring shapes…")
                               .arg(doc_->load_ms + doc_->tree_ms, 0, 'f', 0)
                               .arg(res->layout->ms, 0, 'f', 0));
  spdlog::info("shown {}: {} nodes, load {:.0f} ms, hierarchy {:.0f} ms, layout {:.0f} ms",
               doc_->path.toStdString(), doc_->graph().node_count(), doc_->load_ms, doc_->tree_ms,
               res->layout->ms);
  emit graph_shown();
  emit layout_shown();
  start_types();
}

void MainWindow::start_types() {
  auto doc = doc_;
  types_for_ = doc.get();
  show_progress(tr("Inferring shapes…"), 0, 0);
  types_job_.setFuture(QtConcurrent::run(&background_pool_, [doc] {
    background_priority();
    try {
      return std::make_shared<InferredTypes>(infer_value_types(doc->model));
    } catch (const std::exception& e) {
      spdlog::warn("{}: shape inference failed: {}", doc->path.toStdString(), e.what());
      return std::make_shared<InferredTypes>();
    }
  }));
}

void MainWindow::on_types_finished() {
  if (types_for_ != doc_.get() || !opening_) return;  // a model opened since
  types_ = types_job_.result();
  apply_types_when_idle();
}

void MainWindow::apply_types_when_idle() {
  if (!types_ || types_for_ != doc_.get()) return;
  // Shapes are written in place: wait for every job that reads the graph.
  if (layout_job_.isRunning() || analysis_job_.isRunning() || fused_pane_->is_busy() ||
      export_running()) {
    QTimer::singleShot(10, this, &MainWindow::apply_types_when_idle);
    return;
  }
  apply_value_types(doc_->model, std::move(*types_));
  types_.reset();
  start_layout();  // again, cached levels: the edges' shape labels and bytes
  start_analysis();
}

void MainWindow::toggle_group(int group) {
  if (!doc_ || group <= 0 || group >= int(doc_->tree->group_count())) return;
  expansion_.set_open(group, !expansion_.is_open(group));
  focus_group_ = group;
  start_layout();
}

void MainWindow::open_group(int group) {
  if (!doc_ || group <= 0 || group >= int(doc_->tree->group_count())) return;
  const auto& boxes = scene_->current_layout().box_of_group;
  if (std::size_t(group) < boxes.size() && boxes[std::size_t(group)] >= 0) {
    if (!expansion_.is_open(group)) toggle_group(group);  // on screen: the double-click path
    return;
  }
  for (int g = group; g > 0; g = doc_->tree->group(g).parent) expansion_.set_open(g, true);
  focus_group_ = group;
  start_layout();
}

void MainWindow::reveal_node(NodeId node) {
  if (!doc_ || node < 0 || std::size_t(node) >= doc_->graph().node_count()) return;
  BoxItem* box = scene_->box_of_node(node);
  if (box && box->item().kind == layout::Item::Node) {
    scene_->select_node(node);
    inspector_->show_node(*doc_, node);
    view_->reveal(box->sceneBoundingRect());
    return;
  }
  expansion_.reveal(*doc_->tree, node);
  focus_node_ = node;
  start_layout();
}

void MainWindow::start_layout() {
  if (!doc_) return;
  if (layout_job_.isRunning()) {
    layout_pending_ = true;  // run again with the newest expansion when this one ends
    return;
  }
  auto doc = doc_;
  const layout::Expansion expansion = expansion_;
  layout_for_ = doc.get();
  layout_error_ = std::make_shared<QString>();
  auto error = layout_error_;
  show_progress(tr("Laying out…"), 0, 0);
  layout_job_.setFuture(QtConcurrent::run([doc, expansion, error]() {
    try {
      return std::make_shared<layout::SceneLayout>(doc->layout->compute(expansion));
    } catch (const std::exception& e) {
      *error = QString::fromUtf8(e.what());
      return std::shared_ptr<layout::SceneLayout>();
    }
  }));
}

void MainWindow::on_layout_finished() {
  hide_progress();
  if (layout_for_ != doc_.get()) return;  // a model opened since
  if (layout_pending_) {
    layout_pending_ = false;
    start_layout();
    return;
  }
  auto result = layout_job_.result();
  if (!result) {
    show_error(tr("Layout failed"), *layout_error_);
    return;
  }
  // Keep the group the user clicked where it was on screen.
  QPointF anchor_view;
  const bool keep = focus_group_ > 0 &&
                    scene_->current_layout().box_of_group.size() > std::size_t(focus_group_) &&
                    scene_->current_layout().box_of_group[std::size_t(focus_group_)] >= 0;
  if (keep) {
    const auto& b =
        scene_->current_layout()
            .boxes[std::size_t(scene_->current_layout().box_of_group[std::size_t(focus_group_)])];
    anchor_view = view_->mapFromScene(QPointF(b.x + b.width / 2, b.y));
  }
  scene_->show_layout(*result);
  if (!search_text_.isEmpty()) search_hits_ = scene_->search(search_text_);
  if (keep && std::size_t(focus_group_) < result->box_of_group.size() &&
      result->box_of_group[std::size_t(focus_group_)] >= 0) {
    const auto& b = result->boxes[std::size_t(result->box_of_group[std::size_t(focus_group_)])];
    const QPointF now = view_->mapFromScene(QPointF(b.x + b.width / 2, b.y));
    const QPointF centre =
        view_->mapToScene(view_->viewport()->rect().center() + (now - anchor_view).toPoint());
    view_->centerOn(centre);
  }
  focus_group_ = -1;
  if (focus_plan_group_ >= 0) {
    const int pg = focus_plan_group_;
    focus_plan_group_ = -1;
    select_fusion_group(pg);
  }
  if (focus_node_ != kNoNode) {
    const NodeId n = focus_node_;
    focus_node_ = kNoNode;
    reveal_node(n);
  }
  update_status();
  statusBar()->showMessage(tr("Layout: %1 ms, %2 levels laid out")
                               .arg(result->ms, 0, 'f', 0)
                               .arg(result->levels_laid_out),
                           4000);
  emit layout_shown();
}

void MainWindow::start_analysis() {
  if (!doc_) return;
  if (analysis_job_.isRunning()) {
    analysis_pending_ = true;  // the newest document and settings win
    return;
  }
  AnalysisSettings settings;
  settings.device = device_box_->currentText();
  settings.opt_level = level_box_->currentIndex();
  auto doc = doc_;
  analysis_for_ = doc.get();
  show_progress(tr("Finding fusions…"), 0, 0);
  analysis_job_.setFuture(QtConcurrent::run(&background_pool_, [doc, settings] {
    background_priority();
    return run_analysis(doc->graph(), doc->path, settings);
  }));
}

void MainWindow::on_analysis_finished() {
  if (analysis_pending_) {
    analysis_pending_ = false;
    start_analysis();
    return;
  }
  hide_progress();
  if (analysis_for_ != doc_.get()) return;
  auto out = analysis_job_.result();
  if (!out) return;
  candidates_->set_plan(nullptr);
  apply_analysis(*doc_, std::move(*out));
  candidates_->set_plan(&doc_->plan);
  plan_path_.clear();
  setWindowModified(false);
  plan_changed(false, /*rows_changed=*/false);  // the table was just reset
  scene_->set_overlay(scene_->overlay());       // the cost model changed with the device
  update_status();
  if (opening_ && !types_ && !types_job_.isRunning()) {  // the last step of opening
    opening_ = false;
    hide_progress();
    inspector_->show_model(*doc_);  // with the shape inference figures
    statusBar()->showMessage(tr("Opened in %1 ms (shapes %2 ms, analysis %3 ms)")
                                 .arg(doc_->load_ms + doc_->tree_ms +
                                          doc_->model.info.shape_inference_ms + doc_->analysis_ms,
                                      0, 'f', 0)
                                 .arg(doc_->model.info.shape_inference_ms, 0, 'f', 0)
                                 .arg(doc_->analysis_ms, 0, 'f', 0),
                             8000);
    spdlog::info("opened {}: shapes {:.0f} ms, analysis {:.0f} ms", doc_->path.toStdString(),
                 doc_->model.info.shape_inference_ms, doc_->analysis_ms);
    if (!doc_->analysis_error.isEmpty()) show_error(tr("Analysis failed"), doc_->analysis_error);
    emit model_opened();
    return;
  }
  if (!doc_->analysis_error.isEmpty()) show_error(tr("Analysis failed"), doc_->analysis_error);
}

}  // namespace fx::views
