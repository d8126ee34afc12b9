// SPDX-License-Identifier: Apache-2.0
#include "drawing/hierarchical_layout.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "drawing/edge_router.h"
#include "drawing/layered_layout.h"
#include "util/stopwatch.h"

namespace fx::drawing {
namespace {

uint64_t pair_key(int32_t a, int32_t b) {
  return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
}

bool same_sizes(const std::vector<Size>& a, const std::vector<Size>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].width != b[i].width || a[i].height != b[i].height) return false;
  return true;
}

// Characters, not bytes: labels hold "×" and "…".
std::size_t utf8_length(const std::string& s) {
  return std::size_t(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// "conv1.weight" -> "weight", "/layer1/Constant_3_output_0" -> "Constant_3_output_0":
// the last part of a value's name, cut to a box-friendly length.
std::string short_value_name(const std::string& name) {
  const std::size_t cut = name.find_last_of("./");
  std::string s = cut == std::string::npos || cut + 1 >= name.size() ? name : name.substr(cut + 1);
  if (utf8_length(s) > 16) s = s.substr(0, 15) + "…";
  return s.empty() ? "const" : s;
}

// The ONNX schema's name of input `index` of the most common ops, as Netron labels a
// weight ("W", "B", "scale"); empty when not listed (the value's own name is used).
std::string schema_input_name(const Node& n, std::size_t index) {
  static const std::unordered_map<std::string, std::vector<std::string>> names = {
      {"Conv", {"X", "W", "B"}},
      {"ConvTranspose", {"X", "W", "B"}},
      {"BatchNormalization", {"X", "scale", "B", "mean", "var"}},
      {"InstanceNormalization", {"input", "scale", "B"}},
      {"LayerNormalization", {"X", "scale", "B"}},
      {"Gemm", {"A", "B", "C"}},
      {"MatMul", {"A", "B"}},
      {"Add", {"A", "B"}},
      {"Sub", {"A", "B"}},
      {"Mul", {"A", "B"}},
      {"Div", {"A", "B"}},
      {"Pow", {"X", "Y"}},
      {"PRelu", {"X", "slope"}},
      {"Gather", {"data", "indices"}},
      {"Reshape", {"data", "shape"}},
      {"Expand", {"input", "shape"}},
      {"Resize", {"X", "roi", "scales", "sizes"}},
      {"Slice", {"data", "starts", "ends", "axes", "steps"}},
      {"Clip", {"input", "min", "max"}},
      {"Pad", {"data", "pads", "constant_value"}},
      {"Unsqueeze", {"data", "axes"}},
      {"Squeeze", {"data", "axes"}},
      {"ReduceMean", {"data", "axes"}},
      {"Where", {"condition", "X", "Y"}},
  };
  if (!n.domain.empty()) return {};
  auto it = names.find(n.op_type);
  return it != names.end() && index < it->second.size() ? it->second[index] : std::string();
}

std::string dims_text(const Shape& shape) {
  if (!shape.rank_known()) return "?";
  if (shape.rank() == 0) return "scalar";
  std::string s;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (i) s += "×";
    const Dim& d = shape.dims()[i];
    s += d.is_static() ? std::to_string(d.value) : d.symbol.empty() ? "?" : d.symbol;
  }
  return s;
}

}  // namespace

std::vector<std::string> box_lines(const Graph& graph, const ScopeTree& tree, const Item& item) {
  if (item.kind == Item::Group) return {tree.group(item.id).name, tree.summary(item.id)};
  // An op, then its constant inputs (weights, folded Constant ops) as Netron lists them:
  // "W ⟨64×3×7×7⟩". The most shown is bounded so that a Concat of many
  // constants stays a box.
  constexpr std::size_t kMostConstants = 4;
  const Node& n = graph.node(item.id);
  std::vector<std::string> lines{n.op_type};
  std::size_t constants = 0;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const ValueId v = n.inputs[i];
    if (v == kNoValue) continue;
    const Value& val = graph.value(v);
    const bool folded = val.producer != kNoNode && tree.folded(val.producer);
    if (!(val.is_constant() && val.producer == kNoNode) && !folded) continue;
    if (++constants > kMostConstants) continue;
    std::string name = schema_input_name(n, i);
    if (name.empty()) name = short_value_name(val.name);
    lines.push_back(name + " ⟨" + dims_text(val.shape) + "⟩");
  }
  if (constants > kMostConstants)
    lines.push_back("+" + std::to_string(constants - kMostConstants) + " constants");
  return lines;
}

double LabelMetrics::width_of(const std::string& line, bool bold) const {
  return text_width ? text_width(line, bold) : double(utf8_length(line)) * char_width;
}

Size box_size(const std::vector<std::string>& lines, const LabelMetrics& m, bool bold) {
  double longest = 0;
  for (const auto& l : lines) longest = std::max(longest, m.width_of(l, bold));
  return {std::max(60.0, std::ceil(longest) + 2 * m.padding),
          double(lines.size()) * m.line_height + m.padding};
}

std::string frame_title(const std::vector<std::string>& lines) {
  std::string title;
  for (const auto& l : lines) title += (title.empty() ? "" : "  ·  ") + l;
  return title;
}

HierarchicalLayout::HierarchicalLayout(const Graph& graph, const ScopeTree& tree,
                                       LabelMetrics metrics)
    : graph_(graph), tree_(tree), metrics_(metrics), closed_sizes_(tree.group_count()) {}

Size HierarchicalLayout::closed_size(const Item& item) {
  if (item.kind == Item::Node) return box_size(box_lines(graph_, tree_, item), metrics_);
  Size& s = closed_sizes_[std::size_t(item.id)];
  if (s.width == 0) s = box_size(box_lines(graph_, tree_, item), metrics_, true);
  return s;
}

double HierarchicalLayout::title_width(const Item& group) const {
  return std::ceil(metrics_.width_of(frame_title(box_lines(graph_, tree_, group)), false)) + 16;
}

Size HierarchicalLayout::content_size(GroupId g, const Expansion& expansion, int& laid_out) {
  auto [it, added] = levels_.try_emplace(g);
  Level& level = it->second;
  if (added) {
    level.graph = level_graph(graph_, tree_, g);
    for (std::size_t i = 0; i < level.graph.edges.size(); ++i)
      level.edge_index[pair_key(level.graph.edges[i].from, level.graph.edges[i].to)] = i;
  }
  std::vector<Size> sizes;
  sizes.reserve(level.graph.items.size());
  for (const Item& child : level.graph.items) {
    if (child.kind == Item::Group && expansion.is_open(child.id)) {
      Size inner = content_size(child.id, expansion, laid_out);
      // An open frame writes its lines on one title bar ("name  ·  summary"): it is at
      // least that wide, so that the title is never clipped, and a port wider, so that
      // edges into it pass beside the title.
      const double title = title_width(child) + metrics_.char_width;
      sizes.push_back({std::max({inner.width + 2 * frame_margin(), closed_size(child).width,
                                 title + frame_port_width()}),
                       inner.height + frame_top() + frame_margin()});
    } else {
      sizes.push_back(closed_size(child));
    }
  }
  if (!level.laid_out || !same_sizes(sizes, level.sizes)) {
    std::vector<LayoutEdge> edges;
    edges.reserve(level.graph.edges.size());
    for (const auto& e : level.graph.edges) edges.push_back({e.from, e.to});
    level.layout = layout_level(sizes, edges);
    level.sizes = std::move(sizes);
    level.laid_out = true;
    ++laid_out;
  }
  return level.layout.size;
}

void HierarchicalLayout::place(GroupId g, double ox, double oy, int depth,
                               const Expansion& expansion, SceneLayout& scene) {
  const Level& level = levels_.at(g);
  for (std::size_t i = 0; i < level.graph.items.size(); ++i) {
    const Item& item = level.graph.items[i];
    const BoxPlacement& p = level.layout.boxes[i];
    SceneBox box;
    box.item = item;
    box.parent = g;
    box.depth = depth;
    box.open = item.kind == Item::Group && expansion.is_open(item.id);
    box.width = p.size.width;
    box.height = p.size.height;
    box.x = ox + p.centre.x - p.size.width / 2;
    box.y = oy + p.centre.y - p.size.height / 2;
    if (box.open) box.title_width = title_width(item);
    const auto index = int32_t(scene.boxes.size());
    if (item.kind == Item::Node)
      scene.box_of_node[std::size_t(item.id)] = index;
    else
      scene.box_of_group[std::size_t(item.id)] = index;
    scene.boxes.push_back(box);
    if (box.open) {
      // Centre the content when the title made the frame wider than the content.
      const Size inner = levels_.at(item.id).layout.size;
      const double dx = (box.width - inner.width) / 2;
      place(item.id, box.x + dx, box.y + frame_top(), depth + 1, expansion, scene);
    }
  }
}

SceneLayout HierarchicalLayout::compute(const Expansion& expansion) {
  Stopwatch watch;
  SceneLayout scene;
  scene.size = content_size(kRootGroup, expansion, scene.levels_laid_out);
  scene.box_of_node.assign(graph_.node_count(), -1);
  scene.box_of_group.assign(tree_.group_count(), -1);
  place(kRootGroup, 0, 0, 0, expansion, scene);

  // Edges come from the visible graph, so that data flowing into an open group ends
  // at the box inside it that consumes it.
  const VisibleGraph vg = visible_graph(graph_, tree_, expansion);
  auto scene_index = [&](const VisibleBox& b) {
    return b.item.kind == Item::Node ? scene.box_of_node[std::size_t(b.item.id)]
                                     : scene.box_of_group[std::size_t(b.item.id)];
  };
  for (std::size_t n = 0; n < graph_.node_count(); ++n)
    if (vg.box_of_node[n] >= 0)
      scene.box_of_node[n] = scene_index(vg.boxes[std::size_t(vg.box_of_node[n])]);
  // What a connector must not run under: closed boxes; and the frames whose borders
  // it crosses only at the top (beside the title) or the bottom.
  std::vector<Rect> boxes;
  std::vector<Frame> frames;
  boxes.reserve(scene.boxes.size());
  for (const SceneBox& b : scene.boxes) {
    if (b.open)
      frames.push_back(
          {{b.x, b.y, b.width, b.height}, frame_header(), b.title_width, b.y + frame_top()});
    else
      boxes.push_back({b.x, b.y, b.width, b.height});
  }
  for (const AggregatedEdge& e : vg.edges) {
    const VisibleBox& a = vg.boxes[std::size_t(e.from)];
    const VisibleBox& b = vg.boxes[std::size_t(e.to)];
    SceneEdge se;
    se.from = scene_index(a);
    se.to = scene_index(b);
    se.count = e.count;
    se.value = e.value;
    se.bytes = e.bytes;
    const SceneBox& sa = scene.boxes[std::size_t(se.from)];
    const SceneBox& sb = scene.boxes[std::size_t(se.to)];
    if (a.parent == b.parent) {
      const Level& level = levels_.at(a.parent);
      const int32_t ia = a.item.kind == Item::Node ? tree_.index_in_group(a.item.id)
                                                   : tree_.group(a.item.id).index_in_parent;
      const int32_t ib = b.item.kind == Item::Node ? tree_.index_in_group(b.item.id)
                                                   : tree_.group(b.item.id).index_in_parent;
      auto it = level.edge_index.find(pair_key(ia, ib));
      if (it != level.edge_index.end() && !level.layout.edges[it->second].points.empty()) {
        const EdgePath& path = level.layout.edges[it->second];
        // Level coordinates are relative to the level's origin: shift by the offset
        // of the first box between its level and the scene.
        const BoxPlacement& pa = level.layout.boxes[std::size_t(ia)];
        const double dx = sa.x + sa.width / 2 - pa.centre.x;
        const double dy = sa.y + sa.height / 2 - pa.centre.y;
        for (const Point& p : path.points) se.points.push_back({p.x + dx, p.y + dy});
        se.has_arrow = path.has_arrow;
        se.arrow_tip = {path.arrow_tip.x + dx, path.arrow_tip.y + dy};
        se.routed = true;
      }
    }
    if (!se.routed) {
      const Point p0{sa.x + sa.width / 2, sa.y + sa.height};
      const Point p3{sb.x + sb.width / 2, sb.y};
      const double bend = std::max(20.0, std::abs(p3.y - p0.y) / 3);
      se.points =
          route_through_frames({sa.x, sa.y, sa.width, sa.height}, {sb.x, sb.y, sb.width, sb.height},
                               {p0, {p0.x, p0.y + bend}, {p3.x, p3.y - bend}, p3}, boxes, frames);
      se.has_arrow = false;
    }
    scene.edges.push_back(std::move(se));
  }
  scene.ms = watch.elapsed_ms();
  return scene;
}

}  // namespace fx::drawing
