// SPDX-License-Identifier: Apache-2.0
#include "drawing/hierarchical_layout.h"

#include <algorithm>

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

}  // namespace

std::vector<std::string> box_lines(const Graph& graph, const ScopeTree& tree, const Item& item) {
  if (item.kind == Item::Node) return {graph.node(item.id).op_type};
  return {tree.group(item.id).name, tree.summary(item.id)};
}

Size box_size(const std::vector<std::string>& lines, const LabelMetrics& m) {
  std::size_t longest = 0;
  for (const auto& l : lines) longest = std::max(longest, utf8_length(l));
  return {std::max(60.0, double(longest) * m.char_width + 2 * m.padding),
          double(lines.size()) * m.line_height + m.padding};
}

HierarchicalLayout::HierarchicalLayout(const Graph& graph, const ScopeTree& tree,
                                       LabelMetrics metrics)
    : graph_(graph), tree_(tree), metrics_(metrics), closed_sizes_(tree.group_count()) {}

Size HierarchicalLayout::closed_size(const Item& item) {
  if (item.kind == Item::Node) return box_size(box_lines(graph_, tree_, item), metrics_);
  Size& s = closed_sizes_[std::size_t(item.id)];
  if (s.width == 0) s = box_size(box_lines(graph_, tree_, item), metrics_);
  return s;
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
      // least that wide, so that the title is never clipped.
      const auto lines = box_lines(graph_, tree_, child);
      std::size_t title = 0;
      for (const auto& l : lines) title += utf8_length(l);
      title += 5 * (lines.size() - 1);  // the separators
      const double title_width = double(title) * metrics_.char_width + 16 + metrics_.char_width;
      sizes.push_back(
          {std::max({inner.width + 2 * frame_margin(), closed_size(child).width, title_width}),
           inner.height + frame_header() + frame_margin()});
    } else {
      sizes.push_back(closed_size(child));
    }
  }
  if (!level.laid_out || !same_sizes(sizes, level.sizes)) {
    std::vector<LayoutEdge> edges;
    edges.reserve(level.graph.edges.size());
    for (const auto& e : level.graph.edges) edges.push_back({e.from, e.to});
    level.layout = layout_with_dot(sizes, edges);
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
      place(item.id, box.x + dx, box.y + frame_header(), depth + 1, expansion, scene);
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
      se.points = {p0, {p0.x, p0.y + bend}, {p3.x, p3.y - bend}, p3};
      se.has_arrow = false;
    }
    scene.edges.push_back(std::move(se));
  }
  scene.ms = watch.elapsed_ms();
  return scene;
}

}  // namespace fx::drawing
