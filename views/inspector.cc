// SPDX-License-Identifier: Apache-2.0
#include "views/inspector.h"

#include "analysis/plan_totals.h"

#include <QPainter>
#include <QScrollBar>

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QKeyEvent>

#include <set>

#include "views/op_style.h"

namespace fx::views {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString value_text(const Graph& g, ValueId v) {
  if (v == kNoValue) return QObject::tr("(omitted)");
  const Value& val = g.value(v);
  QString s =
      QString::fromLatin1(dtype_name(val.dtype)) + QLatin1Char(' ') + format_shape(val.shape);
  if (val.is_constant()) s += QObject::tr("  constant");
  return s;
}

// How a weight reached its reader, when canonicalization folded the way: the node
// now reads the initializer, as if the exporter had written it so.
QString folded_origin(const ModelDocument& doc, const std::string& value) {
  for (const auto& p : doc.model.canonical.passes)
    for (const auto& w : p.weights)
      if (w == value) {
        if (p.pass == "identity-elimination") return QObject::tr("  (was behind an Identity)");
        if (p.pass == "constant-to-initializer") return QObject::tr("  (was a Constant node)");
        return QObject::tr("  (folded by %1)").arg(qs(p.pass));
      }
  return {};
}

}  // namespace

Inspector::Inspector(QWidget* parent) : QTreeWidget(parent) {
  setColumnCount(2);
  setHeaderLabels({tr("Property"), tr("Value")});
  header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  // Long node names (ViT's "/encoder/layers/encoder_layer_0/ln_2/ReduceMean") must not
  // push the values out of sight: cap the key column and elide in the middle.
  header()->setMaximumSectionSize(280);
  setTextElideMode(Qt::ElideMiddle);
  setAlternatingRowColors(true);
  setSelectionMode(QAbstractItemView::ExtendedSelection);
  setWordWrap(true);
  setUniformRowHeights(false);
}

QTreeWidgetItem* Inspector::section(const QString& title) {
  auto* item = new QTreeWidgetItem(this, {title});
  QFont f = item->font(0);
  f.setBold(true);
  item->setFont(0, f);
  item->setFirstColumnSpanned(true);
  item->setExpanded(true);
  return item;
}

void Inspector::row(QTreeWidgetItem* parent, const QString& key, const QString& value) {
  auto* item = new QTreeWidgetItem(parent, {key, value});
  item->setToolTip(0, key);
  item->setToolTip(1, value);
}

void Inspector::set_empty_note(const QString& note) {
  empty_note_ = note;
  viewport()->update();
}

void Inspector::paintEvent(QPaintEvent* event) {
  QTreeWidget::paintEvent(event);
  if (topLevelItemCount() > 0 || empty_note_.isEmpty()) return;
  QPainter p(viewport());
  p.setPen(palette().color(QPalette::PlaceholderText));
  p.drawText(viewport()->rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
             empty_note_);
}

void Inspector::show_nothing() {
  showing_model_ = false;
  fusion_group_ = -1;
  node_ = kNoNode;
  clear();
}

void Inspector::show_model(const ModelDocument& doc) {
  fusion_group_ = -1;
  node_ = kNoNode;
  showing_model_ = true;
  clear();
  const Graph& g = doc.graph();
  const ModelInfo& info = doc.model.info;
  auto* m = section(tr("Model"));
  row(m, tr("File"), doc.path);
  // paddle2onnx leaves the producer empty: say so rather than show a blank value.
  const QString producer = qs(info.producer_name + " " + info.producer_version).trimmed();
  row(m, tr("Producer"), producer.isEmpty() ? tr("not recorded in the file") : producer);
  QStringList opsets;
  for (const auto& [domain, version] : info.opsets)
    opsets << (domain.empty() ? QStringLiteral("ai.onnx") : qs(domain)) + QLatin1Char(' ') +
                  QString::number(version);
  row(m, tr("Opsets"), opsets.join(QStringLiteral(", ")));
  row(m, tr("Nodes"), QString::number(g.node_count()));
  row(m, tr("Parameters"), format_bytes(double(g.parameter_bytes())));
  row(m, tr("Activations"), format_bytes(double(g.activation_bytes())));
  if (info.unknown_shape_nodes > 0)
    row(m, tr("Nodes of unknown shape"), QString::number(info.unknown_shape_nodes));
  // How the model was read, as `fxc inspect` prints it.
  if (!doc.model.assumed_dims.empty()) {
    QStringList dims;
    for (const auto& a : doc.model.assumed_dims)
      dims << qs(a.symbol) + QLatin1Char('=') + QString::number(a.value);
    row(m, tr("Assumed dims"), dims.join(QStringLiteral(", ")));
  }
  {
    const std::string prefix = "canonical: ";
    std::string summary = doc.model.canonical.summary();
    if (summary.rfind(prefix, 0) == 0) summary.erase(0, prefix.size());
    row(m, tr("Canonical"), qs(summary));
  }
  auto* io = section(tr("Inputs"));
  for (ValueId v : g.runtime_inputs()) row(io, qs(g.value(v).name), value_text(g, v));
  auto* out = section(tr("Outputs"));
  for (ValueId v : g.outputs()) row(out, qs(g.value(v).name), value_text(g, v));
  if (doc.analysis) {
    const AnalysisResult& a = *doc.analysis;
    auto* s = section(tr("Fusion analysis"));
    row(s, tr("Device"),
        qs(a.device) + QStringLiteral(" (") + qs(a.device_source) + QLatin1Char(')'));
    row(s, tr("Opt level"), QString::number(a.opt_level));
    // The plan's numbers (accepted groups fused), as the status bar and reports show them.
    const PlanTotals t = plan_totals(a, doc.plan);
    row(s, tr("Groups accepted"), tr("%1 of %2").arg(t.accepted).arg(t.groups));
    row(s, tr("Kernels"), QStringLiteral("%1 → %2").arg(t.kernels_before).arg(t.kernels_after));
    row(s, tr("DRAM traffic"),
        format_bytes(double(t.bytes_before)) + QStringLiteral(" → ") +
            format_bytes(double(t.bytes_after)));
    row(s, tr("Est. time"),
        format_seconds(t.time_before_s) + QStringLiteral(" → ") + format_seconds(t.time_after_s) +
            QStringLiteral(" (%1×)").arg(t.speedup(), 0, 'f', 2));
  } else if (!doc.analysis_error.isEmpty()) {
    row(section(tr("Fusion analysis")), tr("Not available"), doc.analysis_error);
  }
}

void Inspector::show_node(const ModelDocument& doc, NodeId id) {
  showing_model_ = false;
  fusion_group_ = -1;
  node_ = id;
  clear();
  // The drawn graph: a node of an If branch or Loop/Scan body shows its op, attributes
  // and values; only the model's own nodes have a cost and a plan group.
  const Graph& g = doc.drawn_graph();
  if (id < 0 || std::size_t(id) >= g.node_count()) return;
  const Node& n = g.node(id);
  const OpClass cls = classify_node(g, n);
  auto* s = section(tr("Node"));
  row(s, tr("Name"), qs(n.name));
  row(s, tr("Op"), qs(n.qualified_op()));
  row(s, tr("Op kind"), op_kind_label(cls.kind) + (cls.known ? QString() : tr(" (unknown op)")));
  row(s, tr("Scope"), qs(n.scope));
  // What the canonical form folded into this node (a BatchNormalization into its Conv):
  // the user's node, shown as part of the one that now computes it.
  if (doc.is_model_node(id))
    for (const FoldedNode& f : doc.folded_into(n.name))
      row(s, tr("Folded in"),
          tr("%1 '%2' (its parameters are in this node's weights; canonical pass %3)")
              .arg(qs(f.op_type), qs(f.name), qs(f.pass)));
  if (!n.attrs.all().empty()) {
    auto* a = section(tr("Attributes"));
    for (const auto& [name, value] : n.attrs.all())
      row(a, qs(name), qs(attribute_to_string(value)));
  }
  auto* in = section(tr("Inputs"));
  for (ValueId v : n.inputs)
    row(in, v == kNoValue ? QString() : qs(g.value(v).name),
        v == kNoValue ? value_text(g, v) : value_text(g, v) + folded_origin(doc, g.value(v).name));
  auto* out = section(tr("Outputs"));
  for (ValueId v : n.outputs) row(out, qs(g.value(v).name), value_text(g, v));
  if (doc.cost && doc.is_model_node(id)) {
    const Cost& c = doc.cost->node(id);
    auto* cs = section(tr("Cost (%1)").arg(qs(doc.cost->profile().name)));
    if (!c.known) {
      row(cs, tr("Estimate"), tr("unknown: %1").arg(qs(c.unknown_reason)));
    } else {
      row(cs, tr("Bytes read"), format_bytes(double(c.bytes_read)));
      row(cs, tr("Bytes written"), format_bytes(double(c.bytes_written)));
      row(cs, tr("FLOPs"), format_flops(c.flops));
      row(cs, tr("Est. time"), format_seconds(c.time_s));
    }
  }
  const int pg = doc.group_of_node(id);
  auto* f = section(tr("Fusion"));
  if (pg >= 0) {
    const FusionGroup& grp = doc.plan.groups()[std::size_t(pg)];
    row(f, tr("Group"), qs(grp.id) + QStringLiteral(" (") + qs(grp.pattern) + QLatin1Char(')'));
    row(f, tr("Status"), QString::fromLatin1(group_status_name(grp.status)));
  } else if (!doc.is_model_node(id)) {
    row(f, tr("Group"), tr("not in the plan: a control-flow body is analysed on its own"));
  } else {
    row(f, tr("Group"), tr("none"));
  }
  not_fused_rows(doc, {n.name});
}

void Inspector::show_scope_group(const ModelDocument& doc, drawing::GroupId id) {
  showing_model_ = false;
  fusion_group_ = -1;
  node_ = kNoNode;
  clear();
  const drawing::Group& grp = doc.tree->group(id);
  auto* s = section(tr("Group"));
  row(s, tr("Name"), qs(grp.name));
  if (!grp.path.empty()) row(s, tr("Scope"), qs(grp.path));
  row(s, tr("Contents"), qs(doc.tree->summary(id)));
  row(s, tr("Children"), QString::number(grp.children.size()));
  if (doc.cost) {
    // Sum over the ops below, by walking the group.
    int64_t bytes = 0;
    double flops = 0;
    std::vector<drawing::GroupId> stack{id};
    while (!stack.empty()) {
      const auto g = stack.back();
      stack.pop_back();
      for (const auto& it : doc.tree->group(g).children) {
        if (it.kind == drawing::Item::Group) {
          stack.push_back(it.id);
        } else if (!doc.is_model_node(it.id)) {
          continue;  // a body node: no cost of its own (its If/Loop/Scan node has it)
        } else if (const Cost& c = doc.cost->node(it.id); c.known) {
          bytes += c.bytes();
          flops += c.flops;
        }
      }
    }
    row(s, tr("Bytes moved"), format_bytes(double(bytes)));
    row(s, tr("FLOPs"), format_flops(flops));
  }
}

void Inspector::refresh(const ModelDocument& doc) {
  if (showing_model_) {
    show_model(doc);
    return;
  }
  if (fusion_group_ < 0 && node_ == kNoNode) return;
  // Keep the reader's place: expanded rows and scroll position survive the repaint.
  const int scroll = verticalScrollBar()->value();
  if (node_ != kNoNode)
    show_node(doc, node_);
  else
    show_fusion_group(doc, fusion_group_);
  verticalScrollBar()->setValue(scroll);
}

void Inspector::show_fusion_group(const ModelDocument& doc, int pg) {
  showing_model_ = false;
  node_ = kNoNode;
  clear();
  fusion_group_ = pg;
  if (pg < 0 || std::size_t(pg) >= doc.plan.groups().size()) return;
  const FusionGroup& grp = doc.plan.groups()[std::size_t(pg)];
  const GroupEstimate& e = grp.estimate;
  auto* s = section(tr("Fusion group"));
  row(s, tr("Id"), qs(grp.id));
  row(s, tr("Pattern"), qs(grp.pattern));
  row(s, tr("Status"), QString::fromLatin1(group_status_name(grp.status)));
  if (!grp.reason.empty()) row(s, tr("Reason"), qs(grp.reason));
  if (!grp.assumed_note.empty()) row(s, tr("Assumed dims"), qs(grp.assumed_note));
  auto* members = section(tr("Members"));
  for (std::size_t i = 0; i < grp.nodes.size(); ++i)
    row(members, qs(grp.nodes[i]), i < grp.ops.size() ? qs(grp.ops[i]) : QString());
  auto* est = section(tr("Estimate (%1)").arg(qs(e.profile)));
  if (!e.known) {
    row(est, tr("Estimate"), tr("unknown: a member's shape is not static"));
  } else {
    row(est, tr("Bytes in+out before"), format_bytes(double(e.bytes_before)));
    row(est, tr("Bytes in+out after"), format_bytes(double(e.bytes_after)));
    row(est, tr("Bytes saved"),
        format_bytes(double(e.bytes_saved())) +
            QStringLiteral(" (%1%)").arg(e.traffic_reduction() * 100, 0, 'f', 1));
    row(est, tr("Launches"),
        QStringLiteral("%1 → %2").arg(e.launches_before).arg(e.launches_after));
    row(est, tr("Est. kernel time"),
        format_seconds(e.time_before_s) + QStringLiteral(" → ") + format_seconds(e.time_after_s));
    row(est, tr("Est. time saved"),
        tr("%1, by the %2").arg(format_seconds(e.time_saved_s()), qs(e.saving_label())));
    QString footprint = format_bytes(double(e.footprint_bytes));
    if (doc.cost && doc.cost->profile().onchip_capacity_bytes > 0) {
      const double cap = double(doc.cost->profile().onchip_capacity_bytes);
      footprint += tr(" of %1 on-chip (%2%, limit 80%)")
                       .arg(format_bytes(cap))
                       .arg(100.0 * double(e.footprint_bytes) / cap, 0, 'f', 0);
    }
    row(est, tr("Footprint"), footprint);
  }
  not_fused_rows(doc, grp.nodes);
}

void Inspector::not_fused_rows(const ModelDocument& doc, const std::vector<std::string>& members) {
  if (!doc.analysis) return;
  const std::set<std::string> in(members.begin(), members.end());
  QTreeWidgetItem* sec = nullptr;
  for (const NotFused& nf : doc.analysis->not_fused) {
    const bool p = in.count(nf.producer) > 0, c = in.count(nf.consumer) > 0;
    if (p == c) continue;  // both inside, or unrelated
    if (!sec) sec = section(tr("Neighbours not fused"));
    row(sec, qs(p ? nf.consumer : nf.producer),
        QString::fromLatin1(not_fused_reason_name(nf.reason)) + QStringLiteral(": ") + qs(nf.text));
  }
}

QString Inspector::value_of(const QString& key) const {
  const auto found = findItems(key, Qt::MatchExactly | Qt::MatchRecursive, 0);
  return found.isEmpty() ? QString() : found.front()->text(1);
}

void Inspector::keyPressEvent(QKeyEvent* event) {
  if (event->matches(QKeySequence::Copy)) {
    QStringList lines;
    for (QTreeWidgetItem* item : selectedItems())
      lines << item->text(0) + QLatin1Char('\t') + item->text(1);
    QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')));
    return;
  }
  QTreeWidget::keyPressEvent(event);
}

}  // namespace fx::views
