// SPDX-License-Identifier: Apache-2.0
#include "views/document_controller.h"

#include <QFileInfo>
#include <QPromise>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

#include <spdlog/spdlog.h>

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

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

struct DocumentController::OpenResult {
  std::shared_ptr<ModelDocument> doc;
  std::shared_ptr<drawing::SceneLayout> layout;
  drawing::Expansion expansion;
  QString error;
};

DocumentController::DocumentController(QObject* parent) : QObject(parent) {
  connect(&open_job_, &QFutureWatcherBase::finished, this, &DocumentController::on_open_finished);
  connect(&layout_job_, &QFutureWatcherBase::finished, this,
          &DocumentController::on_layout_finished);
  connect(&analysis_job_, &QFutureWatcherBase::finished, this,
          &DocumentController::on_analysis_finished);
  connect(&types_job_, &QFutureWatcherBase::finished, this, &DocumentController::on_types_finished);
  connect(&open_job_, &QFutureWatcherBase::progressValueChanged, this,
          &DocumentController::progress_changed);
}

DocumentController::~DocumentController() {
  cancel();
  open_job_.waitForFinished();
  layout_job_.waitForFinished();
  analysis_job_.waitForFinished();
  types_job_.waitForFinished();
}

bool DocumentController::is_busy() const {
  return open_job_.isRunning() || layout_job_.isRunning() || analysis_job_.isRunning() || opening_;
}

DocumentController::Progress DocumentController::progress() const {
  if (open_job_.isRunning()) {
    if (open_job_.progressMaximum() == 0)  // the worker has not reported yet
      return {true, open_step_text(OpenStep::Parsing), 0, int(OpenStep::Done)};
    return {true, open_job_.progressText(), open_job_.progressValue(), open_job_.progressMaximum()};
  }
  // A cancelled job may still run to its end: it is no longer shown.
  if (layout_job_.isRunning() && layout_generation_ == generation_)
    return {true, tr("Laying out…"), 0, 0};
  if (opening_ && (types_job_.isRunning() || types_)) return {true, tr("Inferring shapes…"), 0, 0};
  if (analysis_job_.isRunning() && analysis_generation_ == generation_)
    return {true, tr("Finding fusions…"), 0, 0};
  return {};
}

void DocumentController::cancel() {
  if (open_job_.isRunning()) open_job_.cancel();
  // Every job started before now is stale: its result is dropped when it arrives.
  ++generation_;
  layout_pending_ = false;
  analysis_pending_ = false;
  types_.reset();
  if (opening_) {
    opening_ = false;
    emit message(tr("Cancelled: shapes and analysis were not run"), 5000);
  }
  emit progress_changed();
}

void DocumentController::open(const QString& given) {
  const QString path = QFileInfo(given).absoluteFilePath();
  cancel();
  const quint64 gen = generation_;
  const AnalysisSettings settings = settings_;
  const drawing::LabelMetrics metrics = metrics_;
  const bool constants_as_nodes = constants_as_nodes_;
  emit message(tr("Opening %1…").arg(path), 0);
  open_job_.setFuture(QtConcurrent::run([path, settings, metrics, gen, constants_as_nodes](
                                            QPromise<Tagged<OpenResult>>& promise) {
    auto res = std::make_shared<OpenResult>();
    promise.setProgressRange(0, int(OpenStep::Done));
    promise.setProgressValueAndText(int(OpenStep::Parsing), open_step_text(OpenStep::Parsing));
    try {
      OpenCallbacks cb;
      cb.step = [&](OpenStep s) { promise.setProgressValueAndText(int(s), open_step_text(s)); };
      cb.cancelled = [&] { return promise.isCanceled(); };
      res->doc = open_document(path, settings, metrics, cb);
      if (res->doc && constants_as_nodes) rebuild_hierarchy(*res->doc, true, metrics);
      if (res->doc && !promise.isCanceled()) {
        promise.setProgressValueAndText(int(OpenStep::Layout), open_step_text(OpenStep::Layout));
        res->expansion = drawing::initial_expansion(*res->doc->tree);
        res->layout =
            std::make_shared<drawing::SceneLayout>(res->doc->layout->compute(res->expansion));
      }
    } catch (const std::exception& e) {
      res->doc.reset();
      res->error = QString::fromUtf8(e.what());
    }
    promise.addResult(Tagged<OpenResult>{gen, res});
  }));
  emit progress_changed();
}

void DocumentController::on_open_finished() {
  emit progress_changed();
  const QFuture<Tagged<OpenResult>> f = open_job_.future();
  if (f.isCanceled() || f.resultCount() == 0 || f.result().generation != generation_) {
    emit message(tr("Opening cancelled"), 5000);
    return;
  }
  std::shared_ptr<OpenResult> res = f.result().value;
  if (!res->doc || !res->layout) {
    emit failed(tr("Cannot open model"), res->error);
    return;
  }
  // A new document: every job still running on the old one is stale.
  ++generation_;
  doc_ = res->doc;
  opening_ = true;
  types_.reset();
  expansion_ = res->expansion;
  emit document_shown(*res->layout);
  emit message(tr("Shown in %1 ms (layout %2 ms); inferring shapes…")
                   .arg(doc_->load_ms + doc_->tree_ms, 0, 'f', 0)
                   .arg(res->layout->ms, 0, 'f', 0),
               0);
  spdlog::info("shown {}: {} nodes, load {:.0f} ms, hierarchy {:.0f} ms, layout {:.0f} ms",
               doc_->path.toStdString(), doc_->graph().node_count(), doc_->load_ms, doc_->tree_ms,
               res->layout->ms);
  start_types();
}

void DocumentController::start_types() {
  auto doc = doc_;
  const quint64 gen = generation_;
  const bool constants_as_nodes = constants_as_nodes_;
  const drawing::LabelMetrics metrics = metrics_;
  types_job_.setFuture(
      QtConcurrent::run(&background_pool_, [doc, gen, constants_as_nodes, metrics] {
        background_priority();
        auto out = std::make_shared<FoldedReading>();
        try {
          *out = read_with_shapes(*doc, constants_as_nodes, metrics);
          return Tagged<FoldedReading>{gen, out};
        } catch (const std::exception& e) {
          spdlog::warn("{}: reading with shapes failed ({}); shapes without shape-folding",
                       doc->path.toStdString(), e.what());
        }
        try {
          out->types = infer_value_types(doc->model);
        } catch (const std::exception& e) {
          spdlog::warn("{}: shape inference failed: {}", doc->path.toStdString(), e.what());
        }
        return Tagged<FoldedReading>{gen, out, /*folded=*/false};
      }));
  emit progress_changed();
}

void DocumentController::on_types_finished() {
  const Tagged<FoldedReading> r = types_job_.result();
  if (r.generation != generation_ || !opening_) return;  // a model opened since, or cancelled
  if (r.value->doc) {
    replace_document(r.value->doc, *r.value->layout);
    return;
  }
  doc_->shapes_folded = r.folded;
  types_ = std::make_shared<InferredTypes>(std::move(r.value->types));
  apply_types_when_idle();
}

void DocumentController::replace_document(std::shared_ptr<ModelDocument> doc,
                                          const drawing::SceneLayout& layout) {
  // The jobs still running read the old document: their results are dropped.
  ++generation_;
  layout_pending_ = false;
  analysis_pending_ = false;
  types_.reset();
  // Constants drawn as nodes or folded: toggled while the model was read.
  const bool rebuilt = doc->tree->constants_folded() == constants_as_nodes_;
  if (rebuilt) rebuild_hierarchy(*doc, constants_as_nodes_, metrics_);
  spdlog::info("{}: shape-folding took {} -> {} nodes", doc->path.toStdString(),
               doc_->graph().node_count(), doc->graph().node_count());
  const drawing::Expansion open = carry_expansion(*doc_->tree, expansion_, *doc->tree);
  const drawing::Expansion initial = drawing::initial_expansion(*doc->tree);
  const std::shared_ptr<ModelDocument> previous = std::exchange(doc_, std::move(doc));
  expansion_ = open;
  bool same = !rebuilt && open.size() == initial.size();
  for (std::size_t g = 0; same && g < open.size(); ++g)
    same = open.is_open(drawing::GroupId(g)) == initial.is_open(drawing::GroupId(g));
  if (same) {
    emit document_replaced(layout, previous);
  } else {
    // The user opened or closed groups meanwhile: lay out with theirs, on this thread
    // (what the first paint showed, a few dozen boxes).
    emit document_replaced(doc_->layout->compute(expansion_), previous);
  }
  reanalyse();
}

void DocumentController::apply_types_when_idle() {
  if (!types_ || !doc_) return;
  // Shapes are written in place: wait for every job that reads the graph.
  if (layout_job_.isRunning() || analysis_job_.isRunning() ||
      (outside_readers_ && outside_readers_())) {
    QTimer::singleShot(10, this, &DocumentController::apply_types_when_idle);
    return;
  }
  apply_value_types(doc_->model, std::move(*types_));
  doc_->refresh_drawn_types();
  types_.reset();
  relayout();  // again, cached levels: the edges' shape labels and bytes
  reanalyse();
}

void DocumentController::set_constants_as_nodes(bool on) {
  constants_as_nodes_ = on;
  if (!doc_ || doc_->tree->constants_folded() == !on) return;
  // The layout job reads the tree being replaced: let it end first (one level at most).
  layout_job_.waitForFinished();
  rebuild_hierarchy(*doc_, on, metrics_);
  expansion_ = drawing::initial_expansion(*doc_->tree);
  relayout();
}

void DocumentController::relayout() {
  if (!doc_) return;
  if (layout_job_.isRunning()) {
    layout_pending_ = true;  // run again with the newest expansion when this one ends
    return;
  }
  auto doc = doc_;
  const drawing::Expansion expansion = expansion_;
  const quint64 gen = generation_;
  layout_generation_ = gen;
  layout_error_ = std::make_shared<QString>();
  auto error = layout_error_;
  layout_job_.setFuture(QtConcurrent::run([doc, expansion, error, gen] {
    try {
      return Tagged<drawing::SceneLayout>{
          gen, std::make_shared<drawing::SceneLayout>(doc->layout->compute(expansion))};
    } catch (const std::exception& e) {
      *error = QString::fromUtf8(e.what());
      return Tagged<drawing::SceneLayout>{gen, nullptr};
    }
  }));
  emit progress_changed();
}

void DocumentController::on_layout_finished() {
  if (layout_pending_) {
    layout_pending_ = false;
    relayout();
    return;
  }
  emit progress_changed();
  const Tagged<drawing::SceneLayout> r = layout_job_.result();
  if (r.generation != generation_) return;  // a model opened since, or cancelled
  if (!r.value) {
    emit failed(tr("Layout failed"), *layout_error_);
    return;
  }
  emit layout_ready(*r.value);
  emit message(tr("Layout: %1 ms, %2 levels laid out")
                   .arg(r.value->ms, 0, 'f', 0)
                   .arg(r.value->levels_laid_out),
               4000);
}

void DocumentController::reanalyse() {
  if (!doc_) return;
  if (analysis_job_.isRunning()) {
    analysis_pending_ = true;  // the newest document and settings win
    return;
  }
  const AnalysisSettings settings = settings_;
  auto doc = doc_;
  const quint64 gen = generation_;
  analysis_generation_ = gen;
  analysis_job_.setFuture(QtConcurrent::run(&background_pool_, [doc, settings, gen] {
    background_priority();
    return Tagged<AnalysisOutput>{gen, run_analysis(doc->graph(), doc->path, settings,
                                                    doc->model.assumed_dims, doc->shapes_folded)};
  }));
  emit progress_changed();
}

void DocumentController::set_dims(const std::map<std::string, int64_t>& dims) {
  if (!doc_) return;
  kept_decisions_.clear();
  for (const auto& g : doc_->plan.groups())
    if (g.status != GroupStatus::Candidate) kept_decisions_.push_back(g);
  settings_.dims = dims;
  open(doc_->path);
}

void DocumentController::on_analysis_finished() {
  if (analysis_pending_) {
    analysis_pending_ = false;
    reanalyse();
    return;
  }
  emit progress_changed();
  const Tagged<AnalysisOutput> r = analysis_job_.result();
  if (r.generation != generation_ || !r.value) return;  // a model opened since, or cancelled
  emit analysis_about_to_apply();
  apply_analysis(*doc_, std::move(*r.value));
  for (const auto& g : kept_decisions_) {
    if (g.status == GroupStatus::Accepted) doc_->plan.accept(g.id, g.reason);
    if (g.status == GroupStatus::Rejected) doc_->plan.reject(g.id, g.reason);
  }
  kept_decisions_.clear();
  emit analysis_applied();
  if (opening_ && !types_ && !types_job_.isRunning()) {  // the last step of opening
    finish_opening();
    return;
  }
  if (!doc_->analysis_error.isEmpty()) emit failed(tr("Analysis failed"), doc_->analysis_error);
}

void DocumentController::finish_opening() {
  opening_ = false;
  emit progress_changed();
  emit message(tr("Opened in %1 ms (shapes %2 ms, analysis %3 ms)")
                   .arg(doc_->load_ms + doc_->tree_ms + doc_->model.info.shape_inference_ms +
                            doc_->analysis_ms,
                        0, 'f', 0)
                   .arg(doc_->model.info.shape_inference_ms, 0, 'f', 0)
                   .arg(doc_->analysis_ms, 0, 'f', 0),
               8000);
  spdlog::info("opened {}: shapes {:.0f} ms, analysis {:.0f} ms", doc_->path.toStdString(),
               doc_->model.info.shape_inference_ms, doc_->analysis_ms);
  if (!doc_->analysis_error.isEmpty()) emit failed(tr("Analysis failed"), doc_->analysis_error);
  emit opened();
}

}  // namespace fx::views
