// SPDX-License-Identifier: Apache-2.0
#pragma once
// The explorer's main window: graph view in the centre (the fused graph beside it when
// side by side); inspector, minimap, candidate table, Generate and the before/after
// profile in docks that the user rearranges (restored on the next start); device and
// opt-level selectors; status bar with model stats and a progress bar with Cancel.
//
// The window owns no job and no plan logic: it wires controllers that work without it
// and presents what they report.
//   DocumentController  the open model and its background jobs (open, shapes, layout,
//                       analysis), cancel, stale results by generation
//   PlanController      decisions, undo/redo, plan files, autosave
//   ProfileController   `fxc profile` in a child process, before/after results
//   ExportService       fused model, kernels, Chrome trace, report
//   ViewSync            linked navigation of the original and fused views
//
// Split over main_window.cc (construction, wiring, settings, status),
// main_window_menus.cc (menus and tool bar), main_window_widgets.cc (central split,
// docks, status bar widgets), main_window_navigation.cc (what is on screen: expand,
// reveal, select, search, side by side) and main_window_commands.cc (the public
// commands, forwarded to the controllers with their results shown).

#include <QMainWindow>

#include <memory>

#include "drawing/visible_graph.h"
#include "views/model_document.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QMenu;
class QAction;
class QTimer;
class QDockWidget;

namespace fx::views {

class GraphScene;
class GraphView;
class Minimap;
class Inspector;
class DimsPanel;
class CandidateModel;
class CandidatePanel;
class TimelineView;
class FusedGraphPane;
class CodeDock;
class ProfileSummary;
class DocumentController;
class PlanController;
class ProfileController;
class ExportService;
class ViewSync;
struct BeforeAfterResult;

// The line of an error message the status bar and a dialog's text show; the rest of
// the message goes behind the dialog's "Show Details…".
QString error_headline(const QString& message);

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts opening a model in the background (asks first when the plan is unsaved).
  void open_model(const QString& path);
  bool is_busy() const;
  void cancel_jobs();  // the document's jobs, the running export, generate/compile
  void set_analysis_settings(const AnalysisSettings& s);
  void set_dark(bool dark);
  void set_autosave_dir(const QString& dir);

  // Plan decisions (also what the candidate panel's buttons call).
  void accept_groups(const QStringList& ids);
  void reject_groups(const QStringList& ids);
  void reset_groups(const QStringList& ids);
  void accept_above(double threshold);
  // Rejects every plan group the shown profile measured slower fused; one undo step.
  int reject_measured_slower();
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

  // Before/after profiling (ProfileController). The program defaults to the fxc built
  // or installed next to this executable; tests put a stub in its place.
  void set_profiler(const QString& program);
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

  const ModelDocument* document() const { return doc().get(); }
  GraphScene* scene() const { return scene_; }
  GraphView* view() const { return view_; }
  Inspector* inspector() const { return inspector_; }
  CandidateModel* candidate_model() const { return candidates_; }
  CandidatePanel* candidate_panel() const { return panel_; }
  TimelineView* timeline() const { return timeline_; }
  QString last_error() const { return last_error_; }
  // The headline in the status bar and a dialog, the whole message behind its details.
  void show_error(const QString& title, const QString& message);
  DocumentController* documents() const { return documents_; }
  PlanController* plan() const { return plan_; }
  ProfileController* profiler() const { return profiler_; }
  ExportService* exports() const { return exports_; }

  // Side-by-side fused graph, Generate, exports.
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
  // Exports, each run off the UI thread; `export_finished(ok)` is emitted with the file
  // written. Errors are shown naming the file. Return false when nothing was started.
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
  void showEvent(QShowEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  std::shared_ptr<ModelDocument> doc() const;
  // main_window.cc
  void connect_documents();
  void connect_plan();
  void connect_profiler();
  void connect_exports();
  void restore_settings();
  void save_settings();
  void update_title();
  QString empty_plan_reason() const;  // what the empty candidate table says
  void update_status();
  void update_progress();
  void update_recent_menu();
  void add_recent(const QString& path);
  bool maybe_save();
  AnalysisSettings chosen_settings() const;
  // main_window_menus.cc
  void build_menus();
  void build_file_menu();
  void build_export_menu(QMenu* file);
  void build_view_menu();
  void build_tools_menu();
  void build_tool_bar();
  // main_window_widgets.cc
  void build_central();
  void build_status_bar();
  void build_docks();
  void build_profile_dock(QDockWidget* tabify_with);
  void show_profile_progress(bool on);
  // main_window_navigation.cc
  void connect_selection();  // between the graph, the fused graph, the table, the inspector
  void on_document_shown(const drawing::SceneLayout& layout);
  void on_layout_ready(const drawing::SceneLayout& layout);
  // The model read again with shape-folding (DocumentController::document_replaced):
  // the view stays where the user left it.
  void on_document_replaced(const drawing::SceneLayout& layout,
                            std::shared_ptr<ModelDocument> previous);
  void on_plan_changed(bool rows_changed);
  void select_fusion_group(int plan_index);
  void on_search();
  void refresh_fused();
  // main_window_commands.cc
  void show_profile_result(const BeforeAfterResult& result);

  // Controllers (children of the window).
  DocumentController* documents_;
  PlanController* plan_;
  ProfileController* profiler_;
  ExportService* exports_;
  ViewSync* sync_ = nullptr;

  QString last_error_;
  QString search_text_;
  std::vector<NodeId> search_hits_;
  std::size_t search_pos_ = 0;
  int focus_group_ = -1;         // keep this group in view after the next layout
  NodeId focus_node_ = kNoNode;  // select and centre this node after the next layout
  int focus_plan_group_ = -1;    // select this plan group after the next layout
  bool dark_ = false;
  // No dock layout was saved: the first show sizes the docks to the window then.
  bool default_dock_sizes_ = false;

  GraphScene* scene_;
  GraphView* view_;
  Minimap* minimap_ = nullptr;
  DimsPanel* dims_ = nullptr;  // the model's symbolic dims (dims_panel.h)
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
  QAction* open_ = nullptr;
  QAction* save_ = nullptr;
  QAction* undo_ = nullptr;
  QAction* redo_ = nullptr;
  QAction* profile_ = nullptr;
  TimelineView* timeline_ = nullptr;
  ProfileSummary* profile_summary_ = nullptr;
  QProgressBar* profile_progress_ = nullptr;
  QLabel* profile_status_ = nullptr;
  QPushButton* profile_cancel_ = nullptr;
  FusedGraphPane* fused_pane_ = nullptr;
  QLabel* original_caption_ = nullptr;  // "Original graph — N nodes", side by side only
  QAction* side_by_side_ = nullptr;
  QAction* constants_as_nodes_ = nullptr;
  QAction* link_views_ = nullptr;
  QTimer* fused_timer_ = nullptr;
  CodeDock* code_ = nullptr;
  QAction* generate_ = nullptr;
  QAction* export_traces_ = nullptr;
};

}  // namespace fx::views
