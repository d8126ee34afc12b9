// SPDX-License-Identifier: Apache-2.0
#pragma once
// The open model and its background jobs, without a window: opening (parse, hierarchy,
// first layout), shape inference, relayout after an expand, and the fusion analysis.
// Each job captures what it needs by value (the document by shared pointer), runs in a
// worker, and hands its result back to the UI thread tagged with the generation it was
// started in. open() and cancel() start a new generation, so a result of a superseded
// or cancelled job is dropped however late it arrives; nothing compares raw pointers.
//
// Shapes come in a second reading of the model as fxc reads it (read_with_shapes):
// when shape-folding removes nodes, the document is replaced (document_replaced) before
// the first analysis, so that the analysed graph and its counts are fxc's.
//
// Cancel stops an opening between its steps; the other jobs have no cancellation point
// in core, so cancelling drops their result and the worker ends on its own (a new
// layout still waits for it: one thread at a time may lay out a document).

#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>

#include <functional>
#include <memory>

#include "drawing/visible_graph.h"
#include "views/model_document.h"

namespace fx::views {

class DocumentController : public QObject {
  Q_OBJECT
 public:
  // What a progress bar shows for the running jobs; `visible` false when none runs.
  struct Progress {
    bool visible = false;
    QString text;
    int value = 0, maximum = 0;  // maximum 0: indeterminate
  };

  explicit DocumentController(QObject* parent = nullptr);
  ~DocumentController() override;  // waits for the workers: they hold the document

  // Device and opt level for the next open and analysis.
  void set_settings(const AnalysisSettings& settings) { settings_ = settings; }
  const AnalysisSettings& settings() const { return settings_; }
  // Box sizes for the layouts (from the font the scene paints with).
  void set_label_metrics(const drawing::LabelMetrics& metrics) { metrics_ = metrics; }
  // Shapes are written into the graph in place: they wait while this says that
  // something outside (the fused pane, an export) still reads it.
  void set_outside_readers(std::function<bool()> busy) { outside_readers_ = std::move(busy); }

  void open(const QString& path);
  // Lays out the document with expansion(); a request during a layout runs after it.
  void relayout();
  // Draws Constant ops as nodes of their own (true) or folded into the boxes of the
  // nodes that consume them (false, the default): rebuilds the hierarchy, opens it as
  // a model opens, and lays it out.
  void set_constants_as_nodes(bool on);
  bool constants_as_nodes() const { return constants_as_nodes_; }
  // Runs the analysis again with settings() (a new device or opt level).
  void reanalyse();
  // Reads the open model again with these symbolic dims bound (shape inference and
  // analysis in the background, as an open) and puts the user's accept/reject decisions
  // back on the groups that are still there.
  void set_dims(const std::map<std::string, int64_t>& dims);
  void cancel();

  std::shared_ptr<ModelDocument> document() const { return doc_; }
  drawing::Expansion& expansion() { return expansion_; }
  quint64 generation() const { return generation_; }
  bool is_busy() const;
  // The document is shown; its shapes or its first analysis are still to come.
  bool is_opening() const { return opening_; }
  Progress progress() const;

 signals:
  // A new document is installed with its first layout (before shapes and analysis).
  void document_shown(const drawing::SceneLayout& layout);
  // The same model, read again once shapes were known: shape-folding removed nodes
  // (Shape -> Gather -> ... -> Reshape chains), so the graph is fxc's canonical graph.
  // The view keeps what the user did (selection, zoom, open groups); no analysis yet.
  void document_replaced(const drawing::SceneLayout& layout,
                         std::shared_ptr<fx::views::ModelDocument> previous);
  void layout_ready(const drawing::SceneLayout& layout);
  // The analysis result replaces the document's plan between these two.
  void analysis_about_to_apply();
  void analysis_applied();
  // The last step of an opening: shapes and analysis are in.
  void opened();
  void progress_changed();
  void failed(const QString& title, const QString& message);
  void message(const QString& text, int timeout_ms);

 private:
  struct OpenResult;
  template <class T>
  struct Tagged {
    quint64 generation = 0;
    std::shared_ptr<T> value;
    bool folded = true;  // of a FoldedReading: false when it fell back to infer_value_types
  };
  void start_types();
  void apply_types_when_idle();
  void on_open_finished();
  void on_types_finished();
  void on_layout_finished();
  void on_analysis_finished();
  void finish_opening();
  // Swaps in the document read again with shape-folding (read_with_shapes), keeping the
  // groups the user opened; document_replaced tells the window.
  void replace_document(std::shared_ptr<ModelDocument> doc, const drawing::SceneLayout& layout);

  AnalysisSettings settings_;
  drawing::LabelMetrics metrics_;
  std::function<bool()> outside_readers_;
  std::shared_ptr<ModelDocument> doc_;
  drawing::Expansion expansion_;
  quint64 generation_ = 0;
  quint64 layout_generation_ = 0, analysis_generation_ = 0;  // of the running jobs
  bool opening_ = false;
  bool constants_as_nodes_ = false;
  bool layout_pending_ = false;
  bool analysis_pending_ = false;
  std::shared_ptr<InferredTypes> types_;  // inferred, waiting until no job reads the graph
  std::shared_ptr<QString> layout_error_;
  std::vector<FusionGroup> kept_decisions_;  // from before set_dims, until the next analysis

  // Shapes and analysis after the first paint run here, at a lower CPU priority than
  // the UI thread and the jobs the user waits on (open, layout), which use the global pool.
  QThreadPool background_pool_;
  QFutureWatcher<Tagged<OpenResult>> open_job_;
  QFutureWatcher<Tagged<drawing::SceneLayout>> layout_job_;
  QFutureWatcher<Tagged<AnalysisOutput>> analysis_job_;
  QFutureWatcher<Tagged<FoldedReading>> types_job_;
};

}  // namespace fx::views
