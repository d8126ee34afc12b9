#pragma once
// The explorer's main window: graph view in the centre; inspector, minimap and
// candidate table in docks that the user rearranges (restored on the next start);
// device and opt-level selectors; status bar with model stats and a progress bar with
// Cancel. Opening, analysis and layout run in worker threads, one job of each kind at
// a time; the UI thread only builds scene items from finished results.
//
// Split over main_window.cc (widgets, menus, settings), main_window_jobs.cc (workers)
// and main_window_plan.cc (decisions, plan files, autosave, export).

#include <QFutureWatcher>
#include <QMainWindow>
#include <QPointer>
#include <QTemporaryDir>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <utility>

#include "layout/visible_graph.h"
#include "views/model_document.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QMenu;
class QAction;
class QTimer;
class QProcess;
class QToolBar;

namespace fx::views {

class GraphScene;
class GraphView;
class Minimap;
class Inspector;
class CandidateModel;
class CandidatePanel;
class TimelineView;
class FusedGraphPane;
class CodeDock;
class ProfileSummary;
class ProfileRunner;
struct BeforeAfterResult;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts opening a model in the background (asks first when the plan is unsaved).
  void open_model(const QString& path);
  bool is_busy() const;
  void cancel_jobs();
  void set_analysis_settings(const AnalysisSettings& s);
  void set_dark(bool dark);
  void set_autosave_dir(const QString& dir) { autosave_dir_ = dir; }

  // Plan decisions (also what the candidate panel's buttons call).
  void accept_groups(const QStringList& ids);
  void reject_groups(const QStringList& ids);
  void reset_groups(const QStringList& ids);
  void accept_above(double threshold);
  void undo();
  void redo();
  bool save_plan(const QString& path);
  bool load_plan(const QString& path);
  bool export_view(const QString& path);  // .png or .svg by suffix
  void toggle_group(int group);           // expand/collapse a hierarchy group
  // Opens a group and every group above it in one layout, keeping it in view; what a
  // double-click on its box does when the box is on screen.
  void open_group(int group);
  void reveal_node(NodeId node);  // opens its groups, selects and centres it
  // ---- Before/after profiling (main_window_profile.cc; owned by the profile views) ----
  // `fxc profile MODEL --plan <current plan> --json --trace-before F --trace-after F` in
  // a child process (ProfileRunner): a crash, timeout, compile error or bad JSON there
  // is reported, never fatal. The program defaults to the fxc built or installed next
  // to this executable; tests put a stub in its place.
  void set_profiler(const QString& program) { profiler_ = program; }
  void set_profile_timeout_ms(int ms);
  void profile();
  void cancel_profile();
  bool profile_running() const;
  // Shows a before/after result (what `fxc profile --plan --json` printed) from a file.
  bool load_profile_result(const QString& path);
  // One lane from a Chrome trace or ONNX Runtime profile file.
  bool load_timeline(const QString& path, const QString& lane_title);
  // Selects in the graph the nodes a kernel or group covers (the group when they form one).
  void select_nodes(const QStringList& names);
  ProfileSummary* profile_summary() const { return profile_summary_; }
  // ---- end of the profiling block ----

  const ModelDocument* document() const { return doc_.get(); }
  GraphScene* scene() const { return scene_; }
  GraphView* view() const { return view_; }
  Inspector* inspector() const { return inspector_; }
  CandidateModel* candidate_model() const { return candidates_; }
  CandidatePanel* candidate_panel() const { return panel_; }
  TimelineView* timeline() const { return timeline_; }
  QString last_error() const { return last_error_; }

  // --- side-by-side fused graph, Generate, exports (main_window_fused.cc,
  //     main_window_export.cc) ---
  FusedGraphPane* fused_pane() const { return fused_pane_; }
  void set_side_by_side(bool on);
  bool side_by_side() const;
  // Side by side, zooming, panning or centring one view moves the other to the
  // corresponding nodes (View > Link Navigation, on by default).
  void set_navigation_linked(bool on);
  bool navigation_linked() const;
  CodeDock* code_dock() const { return code_; }
  // Shows the generated source of a plan group in the Generate dock (off the UI thread).
  void generate(int plan_group);
  // Selects a plan group in the table, the graph and the fused graph.
  void select_group(int plan_group);
  // Exports, each run off the UI thread; `done(ok)` is emitted with the file written.
  // Errors are shown naming the file. Return false when nothing was started.
  bool export_fused_model(const QString& path);
  bool export_kernels(const QString& dir);
  bool export_traces(const QString& path);  // needs a timeline lane
  bool export_report(const QString& path);  // .html .md .json .pdf by suffix
  bool export_running() const;

 signals:
  // Opening: graph_shown when the outline is on screen (before shapes and analysis),
  // model_opened when shapes and candidates are in too.
  void graph_shown();
  void model_opened();
  void layout_shown();
  void failed(const QString& message);
  void profile_finished(bool ok);
  void export_finished(bool ok, const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  // main_window.cc
  void build_actions();
  void build_docks();
  void restore_settings();
  void save_settings();
  void update_title();
  void update_status();
  void update_recent_menu();
  void add_recent(const QString& path);
  void show_error(const QString& title, const QString& message);
  bool maybe_save();
  void on_search();
  // main_window_jobs.cc
  void start_layout();
  void start_analysis();
  void start_types();
  void on_types_finished();
  void apply_types_when_idle();
  void on_open_finished();
  void on_layout_finished();
  void on_analysis_finished();
  void show_progress(const QString& text, int value, int maximum);
  void hide_progress();
  // main_window_plan.cc
  // rows_changed false: the table was just reset with this plan (no repaint needed).
  void plan_changed(bool modified = true, bool rows_changed = true);
  void autosave();
  QString autosave_path() const;
  void select_fusion_group(int plan_index);
  // main_window_profile.cc
  void build_profile_docks(class QDockWidget* tabify_with);
  QAction* build_profile_actions(QMenu* tools);  // returns the Profile action
  QString default_profiler() const;
  void on_profile_output(const QByteArray& json);
  void on_profile_failed(const QString& message, bool cancelled);
  void show_profile_result(const BeforeAfterResult& result);

  struct OpenResult;
  std::shared_ptr<ModelDocument> doc_;
  layout::Expansion expansion_;
  QString plan_path_;
  QString autosave_dir_;
  QString last_error_;
  QString search_text_;
  std::vector<NodeId> search_hits_;
  std::size_t search_pos_ = 0;
  bool layout_pending_ = false;
  bool fit_after_layout_ = false;
  int focus_group_ = -1;                       // keep this group in view after the next layout
  NodeId focus_node_ = kNoNode;                // select and centre this node after the next layout
  const ModelDocument* layout_for_ = nullptr;  // the document a running job works on
  const ModelDocument* analysis_for_ = nullptr;
  const ModelDocument* types_for_ = nullptr;
  std::shared_ptr<InferredTypes> types_;  // inferred, waiting until no job reads the graph
  bool analysis_pending_ = false;         // run the analysis again when this one ends
  bool opening_ = false;                  // the document is shown; shapes or analysis still to come
  std::shared_ptr<QString> layout_error_;
  bool dark_ = false;

  GraphScene* scene_;
  GraphView* view_;
  Minimap* minimap_ = nullptr;
  Inspector* inspector_ = nullptr;
  CandidateModel* candidates_ = nullptr;
  CandidatePanel* panel_ = nullptr;
  QComboBox* device_box_ = nullptr;
  QComboBox* level_box_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* stats_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QMenu* view_menu_ = nullptr;
  QAction* undo_ = nullptr;
  QAction* redo_ = nullptr;
  QTimer* autosave_timer_ = nullptr;
  // Profiling (main_window_profile.cc).
  TimelineView* timeline_ = nullptr;
  ProfileSummary* profile_summary_ = nullptr;
  ProfileRunner* profile_runner_ = nullptr;
  QProgressBar* profile_progress_ = nullptr;
  QLabel* profile_status_ = nullptr;
  QPushButton* profile_cancel_ = nullptr;
  QString profiler_;
  std::unique_ptr<QTemporaryDir> profile_dir_;  // plan and traces of the running profile
  // The last before/after result shown, as fxc printed it (from Profile or a loaded
  // file), so that the exported report includes the measurements like `fxc report
  // --profile` does; the origin is the report's --profile path.
  QByteArray profile_json_;
  QString profile_json_origin_;

  // Shapes and analysis after the first paint run here, at a lower CPU priority than
  // the UI thread and the jobs the user waits on (open, layout), which use the global pool.
  QThreadPool background_pool_;
  QFutureWatcher<std::shared_ptr<OpenResult>> open_job_;
  QFutureWatcher<std::shared_ptr<layout::SceneLayout>> layout_job_;
  QFutureWatcher<std::shared_ptr<AnalysisOutput>> analysis_job_;
  QFutureWatcher<std::shared_ptr<InferredTypes>> types_job_;

  // --- side-by-side fused graph, Generate, exports ---
  void build_fused_actions(QMenu* view_menu, QToolBar* bar);
  void build_export_menu(QMenu* file_menu);
  void refresh_fused();
  // Moves the other view (fused when from_fused is false) so that the nodes matching
  // the ones at the centre of this view sit at the same place, at the same zoom.
  void sync_views(bool from_fused);
  // Runs `work` (which throws on failure and returns a summary) in the thread pool.
  bool start_export(const QString& what, const QString& path, std::function<QString()> work);
  FusedGraphPane* fused_pane_ = nullptr;
  QLabel* original_caption_ = nullptr;  // "Original graph — N nodes", side by side only
  QAction* side_by_side_ = nullptr;
  QAction* link_views_ = nullptr;
  bool syncing_views_ = false;  // re-entrancy guard: the follower's move is not a new lead
  QTimer* fused_timer_ = nullptr;
  int focus_plan_group_ = -1;  // highlight this group after the next layout
  CodeDock* code_ = nullptr;
  QAction* generate_ = nullptr;
  QAction* export_traces_ = nullptr;
  QFutureWatcher<std::pair<bool, QString>> export_job_;  // ok, summary or error
  QString export_path_;
};

}  // namespace fx::views
