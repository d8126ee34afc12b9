// SPDX-License-Identifier: Apache-2.0
#pragma once
// Lays out the expanded part of the hierarchy, one level at a time.
//
// Each open group's children are laid out on their own (at most
// ScopeTreeOptions::max_children boxes; by dot, or by the layered layout when the level
// is wide: drawing/layered_layout.h), an open child counting as one big box of the
// size of its own layout. Levels are cached with the child sizes they were laid out
// with, so expanding a group lays out that group and re-lays out only its ancestors
// (whose child sizes changed); everything else is reused. Boxes are then placed at
// absolute positions. Edges between two boxes of one level follow the level's paths;
// edges into or out of an open group are drawn as direct connectors to the boxes
// inside it.
//
// Not thread-safe by itself: one thread at a time may call compute() (the views run it
// in a worker, one job at a time).

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "drawing/graphviz_layout.h"
#include "drawing/scope_tree.h"
#include "drawing/visible_graph.h"

namespace fx::drawing {

// Font measures the caller supplies (the views measure their QFont) so that boxes fit
// their labels without this layer knowing about fonts. `text_width`, when set, measures
// a line exactly (bold: a group's lines); else a line is its characters times
// char_width, which clips lines of wide glyphs ("106-op block").
struct LabelMetrics {
  double char_width = 7;
  double line_height = 15;
  double padding = 10;
  std::function<double(const std::string& line, bool bold)> text_width;
  double width_of(const std::string& line, bool bold) const;
};

// The text lines a closed box shows; the sizer and the painter both use them.
std::vector<std::string> box_lines(const Graph& graph, const ScopeTree& tree, const Item& item);
// Box sizes fit their lines; a group's lines are bold.
Size box_size(const std::vector<std::string>& lines, const LabelMetrics& metrics,
              bool bold = false);
// An open group's title bar: its lines joined on one line, as the frame paints them.
std::string frame_title(const std::vector<std::string>& lines);

struct SceneBox {
  Item item;
  GroupId parent = kRootGroup;
  bool open = false;
  int depth = 0;
  double x = 0, y = 0, width = 0, height = 0;  // top-left corner, absolute, points
  // An open frame's title, from its left side (inset included): edges pass the top
  // border only right of it.
  double title_width = 0;
};

struct SceneEdge {
  int32_t from = -1, to = -1;  // scene box indices (closed boxes)
  int32_t count = 0;
  ValueId value = kNoValue;
  int64_t bytes = 0;
  std::vector<Point> points;  // cubic Bézier control points
  bool has_arrow = false;
  Point arrow_tip;
  bool routed = false;  // true: the level layout's path; false: a connector across frames
};

struct SceneLayout {
  std::vector<SceneBox> boxes;  // open groups before what they contain
  std::vector<SceneEdge> edges;
  std::vector<int32_t> box_of_node;   // NodeId -> closed scene box showing it
  std::vector<int32_t> box_of_group;  // GroupId -> scene box, -1 when not on screen
  Size size;
  int levels_laid_out = 0;  // levels actually laid out (the rest came from the cache)
  double ms = 0;
};

class HierarchicalLayout {
 public:
  HierarchicalLayout(const Graph& graph, const ScopeTree& tree, LabelMetrics metrics = {});

  SceneLayout compute(const Expansion& expansion);

  // Frame around an open group's children: title bar above, then a port row where
  // edges that entered through the top border turn toward their target, margin
  // around. A frame is wider than its title by a port, so that edges can enter beside
  // the title and never cross it (drawing/edge_router.h).
  double frame_header() const { return metrics_.line_height + 10; }
  double frame_port_row() const { return 10; }
  double frame_top() const { return frame_header() + frame_port_row(); }
  double frame_margin() const { return 12; }
  double frame_port_width() const { return 24; }
  // The title's width from the frame's left side, as the frame paints it (8 in).
  double title_width(const Item& group) const;

 private:
  struct Level {
    LevelGraph graph;
    std::unordered_map<uint64_t, std::size_t> edge_index;  // (from, to) -> edge
    std::vector<Size> sizes;                               // child sizes the layout was made with
    LevelLayout layout;
    bool laid_out = false;
  };
  Size content_size(GroupId g, const Expansion& expansion, int& laid_out);
  Size closed_size(const Item& item);
  void place(GroupId g, double ox, double oy, int depth, const Expansion& expansion,
             SceneLayout& scene);

  const Graph& graph_;
  const ScopeTree& tree_;
  LabelMetrics metrics_;
  std::unordered_map<GroupId, Level> levels_;
  std::vector<Size> closed_sizes_;  // per group, computed once
};

}  // namespace fx::drawing
