// SPDX-License-Identifier: Apache-2.0
#include "views/fused_graph_pane.h"

#include "analysis/plan_totals.h"

#include <QLabel>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "views/graph_items.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"

namespace fx::views {

struct FusedGraphPane::Built {
  const ModelDocument* source = nullptr;
  std::shared_ptr<ModelDocument> doc;
  std::shared_ptr<FusedGraph> fused;
  std::vector<int> plan_group;
  drawing::Expansion expansion;
  std::shared_ptr<drawing::SceneLayout> layout;
  QString error;
};

FusedGraphPane::FusedGraphPane(QWidget* parent)
    : QWidget(parent), scene_(new GraphScene(this)), view_(new GraphView(scene_, this)) {
  setObjectName(QStringLiteral("FusedGraphPane"));
  caption_ = new QLabel(tr("Fused graph"), this);
  caption_->setObjectName(QStringLiteral("FusedCaption"));
  caption_->setContentsMargins(6, 2, 6, 2);
  auto* box = new QVBoxLayout(this);
  box->setContentsMargins(0, 0, 0, 0);
  box->setSpacing(0);
  box->addWidget(caption_);
  box->addWidget(view_, 1);
  connect(&job_, &QFutureWatcherBase::finished, this, &FusedGraphPane::on_built);
  connect(&layout_job_, &QFutureWatcherBase::finished, this, &FusedGraphPane::on_layout_finished);
  connect(scene_, &GraphScene::node_selected, this, [this](NodeId n) {
    if (!fused_ || n < 0 || std::size_t(n) >= fused_->originals.size()) return;
    const int pg = plan_group_of(n);
    if (pg >= 0)
      emit kernel_selected(pg);
    else
      emit original_selected(fused_->originals[std::size_t(n)].front());
  });
  connect(scene_, &GraphScene::toggle_requested, this, [this](int g) {
    if (!doc_ || g <= 0 || g >= int(doc_->tree->group_count())) return;
    expansion_.set_open(g, !expansion_.is_open(g));
    start_layout();
  });
}

FusedGraphPane::~FusedGraphPane() {
  scene_->disconnect(this);
  job_.waitForFinished();
  layout_job_.waitForFinished();
}

void FusedGraphPane::set_dark(bool dark) {
  scene_->set_dark(dark);
}

void FusedGraphPane::set_source(std::shared_ptr<ModelDocument> original,
                                const drawing::LabelMetrics& metrics) {
  metrics_ = metrics;
  if (!original) {
    doc_.reset();
    source_ = nullptr;
    fused_.reset();
    plan_group_.clear();
    scene_->set_document(nullptr);
    caption_->setText(tr("Fused graph"));
    return;
  }
  if (job_.isRunning()) {  // build again with the newest plan when this one ends
    rebuild_pending_ = true;
    pending_source_ = original;
    return;
  }
  // Copies of the accepted groups and their plan indices: the plan may change meanwhile.
  std::vector<FusionGroup> groups;
  std::vector<int> indices;
  const auto& all = original->plan.groups();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].status == GroupStatus::Accepted) {
      groups.push_back(all[i]);
      indices.push_back(int(i));
    }
  // The plan's numbers, the same the status bar and reports show (plan_totals.h).
  plan_counts_.clear();
  if (original->analysis) {
    const PlanTotals t = plan_totals(*original->analysis, original->plan);
    plan_counts_ = tr("%1 kernels (%2 of %3 groups accepted)")
                       .arg(t.kernels_after)
                       .arg(t.accepted)
                       .arg(t.groups);
  }
  caption_->setText(tr("Fused graph — building…"));
  job_.setFuture(QtConcurrent::run([original, groups = std::move(groups),
                                    indices = std::move(indices), metrics] {
    auto out = std::make_shared<Built>();
    out->source = original.get();
    try {
      std::vector<const FusionGroup*> ptrs;
      for (const auto& g : groups) ptrs.push_back(&g);
      out->fused = std::make_shared<FusedGraph>(contract_groups(original->graph(), ptrs));
      for (int gi : out->fused->group_of)
        out->plan_group.push_back(gi < 0 ? -1 : indices[std::size_t(gi)]);
      auto doc = std::make_shared<ModelDocument>();
      doc->path = original->path;
      doc->model.info = original->model.info;
      doc->model.graph = out->fused->graph;
      doc->tree = std::make_unique<drawing::ScopeTree>(doc->graph());
      doc->layout =
          std::make_unique<drawing::HierarchicalLayout>(doc->graph(), *doc->tree, metrics);
      doc->rebuild_node_groups();
      out->expansion = drawing::initial_expansion(*doc->tree);
      out->layout = std::make_shared<drawing::SceneLayout>(doc->layout->compute(out->expansion));
      out->doc = std::move(doc);
    } catch (const std::exception& e) {
      out->error = QString::fromUtf8(e.what());
      out->doc.reset();
    }
    return out;
  }));
}

void FusedGraphPane::on_built() {
  if (rebuild_pending_) {
    rebuild_pending_ = false;
    set_source(std::move(pending_source_), metrics_);
    return;
  }
  auto built = job_.result();
  if (!built->doc) {
    caption_->setText(tr("Fused graph — failed: %1").arg(built->error));
    return;
  }
  doc_ = built->doc;
  source_ = built->source;
  fused_ = built->fused;
  plan_group_ = built->plan_group;
  expansion_ = built->expansion;
  scene_->set_document(doc_);
  scene_->show_layout(*built->layout);
  {
    // Not a navigation by the user: a linked original view must not follow the reset;
    // the window aligns this view with the original on `shown` instead.
    const QSignalBlocker quiet(view_);
    view_->show_start();
  }
  caption_->setText(tr("Fused graph — %1, %2 nodes drawn%3")
                        .arg(plan_counts_.isEmpty() ? tr("no analysis") : plan_counts_)
                        .arg(doc_->graph().node_count())
                        .arg(fused_->skipped.empty()
                                 ? QString()
                                 : tr(", %1 groups left out").arg(fused_->skipped.size())));
  caption_->setToolTip(QString::fromStdString([&] {
    std::string s;
    for (const auto& k : fused_->skipped) s += k + "\n";
    return s;
  }()));
  emit graph_built();
  emit shown();
}

void FusedGraphPane::start_layout() {
  if (!doc_) return;
  if (layout_job_.isRunning()) return;  // the finishing job re-runs with the newest state
  auto doc = doc_;
  const drawing::Expansion expansion = expansion_;
  layout_job_.setFuture(QtConcurrent::run([doc, expansion] {
    try {
      return std::make_shared<drawing::SceneLayout>(doc->layout->compute(expansion));
    } catch (const std::exception&) {
      return std::shared_ptr<drawing::SceneLayout>();
    }
  }));
}

void FusedGraphPane::on_layout_finished() {
  auto result = layout_job_.result();
  if (!result || !doc_) return;
  scene_->show_layout(*result);
  if (focus_ != kNoNode) {
    const NodeId n = focus_;
    focus_ = kNoNode;
    if (BoxItem* b = scene_->box_of_node(n)) {
      scene_->select_node(n);
      view_->reveal(b->sceneBoundingRect());
    }
  }
  emit shown();
}

NodeId FusedGraphPane::fused_node_of(NodeId original) const {
  if (!fused_ || original < 0 || std::size_t(original) >= fused_->kernel_of.size()) return kNoNode;
  return fused_->kernel_of[std::size_t(original)];
}

NodeId FusedGraphPane::kernel_of_plan_group(int plan_group) const {
  for (std::size_t i = 0; i < plan_group_.size(); ++i)
    if (plan_group_[i] == plan_group && plan_group >= 0) return NodeId(i);
  return kNoNode;
}

std::vector<NodeId> FusedGraphPane::originals_of(NodeId fused) const {
  if (!fused_ || fused < 0 || std::size_t(fused) >= fused_->originals.size()) return {};
  return fused_->originals[std::size_t(fused)];
}

int FusedGraphPane::plan_group_of(NodeId fused) const {
  if (fused < 0 || std::size_t(fused) >= plan_group_.size()) return -1;
  return plan_group_[std::size_t(fused)];
}

void FusedGraphPane::select_fused(NodeId n) {
  if (!doc_ || n == kNoNode) return;
  BoxItem* b = scene_->box_of_node(n);
  if (b && b->item().kind == drawing::Item::Node) {
    scene_->select_node(n);
    view_->reveal(b->sceneBoundingRect());
    return;
  }
  expansion_.reveal(*doc_->tree, n);
  focus_ = n;
  start_layout();
}

void FusedGraphPane::show_original(NodeId original) {
  select_fused(fused_node_of(original));
}

void FusedGraphPane::show_plan_group(int plan_group) {
  select_fused(kernel_of_plan_group(plan_group));
}

}  // namespace fx::views
