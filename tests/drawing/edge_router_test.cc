// SPDX-License-Identifier: Apache-2.0
// Connectors are routed around boxes and title bars: a ResNet identity skip stays
// visible beside the main chain instead of running under it, and frames are as wide
// as their titles measure.
#include "drawing/edge_router.h"

#include <gtest/gtest.h>

#include "drawing/hierarchical_layout.h"
#include "frame_crossings.h"
#include "graphs.h"

namespace fx::drawing {
namespace {

// A closed box, or an open frame's title (edges pass its top border beside the title).
Rect rect_of(const SceneBox& b, double header) {
  return b.open ? Rect{b.x, b.y, b.title_width, header} : Rect{b.x, b.y, b.width, b.height};
}

TEST(EdgeRouter, SegmentEntersOnlyThroughTheInside) {
  const Rect r{10, 10, 20, 20};
  EXPECT_TRUE(segment_enters({0, 20}, {40, 20}, r));   // straight through
  EXPECT_TRUE(segment_enters({20, 0}, {20, 15}, r));   // ends inside
  EXPECT_FALSE(segment_enters({20, 0}, {20, 10}, r));  // ends on the border
  EXPECT_FALSE(segment_enters({0, 10}, {40, 10}, r));  // runs along the border
  EXPECT_FALSE(segment_enters({0, 0}, {40, 5}, r));    // passes above
  EXPECT_FALSE(segment_enters({35, 0}, {35, 40}, r));  // passes beside
}

TEST(EdgeRouter, AClearStraightPathIsKept) {
  const std::vector<Point> straight = {{0, 10}, {0, 20}, {0, 30}, {0, 40}};
  const auto path =
      route_connector({-5, 0, 10, 10}, {-5, 40, 10, 10}, straight, {{50, 15, 20, 20}});
  ASSERT_EQ(path.size(), straight.size());
  EXPECT_EQ(path[2].y, 30);
}

TEST(EdgeRouter, AnObstacleInTheColumnIsGoneAround) {
  const Rect from{-20, 0, 40, 20}, to{-20, 200, 40, 20}, mid{-30, 80, 60, 30};
  const std::vector<Point> straight = {{0, 20}, {0, 80}, {0, 140}, {0, 200}};
  const auto path = route_connector(from, to, straight, {from, to, mid});
  EXPECT_FALSE(bezier_enters(path, mid));
  EXPECT_FALSE(bezier_enters(path, from));
  EXPECT_FALSE(bezier_enters(path, to));
  // It starts on the source and ends on the target.
  EXPECT_DOUBLE_EQ(path.front().y, 20);
  const Point end = path.back();
  EXPECT_TRUE(end.x >= to.x - 0.01 && end.x <= to.right() + 0.01 && end.y >= to.y - 0.01 &&
              end.y <= to.bottom() + 0.01);
}

// Every edge of a fully opened residual model enters no closed box other than its own
// two ends and no frame's title bar; the skip into each block's Add, which a straight
// connector would draw under the block's chain, is among them.
TEST(EdgeRouter, ResidualSkipsRunBesideTheMainChain) {
  Graph g = testing::residual_blocks(3);
  ScopeTree t(g);
  Expansion e(t.group_count());
  for (GroupId id = 0; id < GroupId(t.group_count()); ++id) e.set_open(id, true);
  HierarchicalLayout layout(g, t);
  const SceneLayout s = layout.compute(e);
  const double header = layout.frame_header();

  int skips = 0;
  for (std::size_t i = 0; i < s.edges.size(); ++i) {
    const SceneEdge& edge = s.edges[i];
    for (std::size_t b = 0; b < s.boxes.size(); ++b) {
      if (int32_t(b) == edge.from || int32_t(b) == edge.to) continue;
      EXPECT_FALSE(bezier_enters(edge.points, rect_of(s.boxes[b], header)))
          << "edge " << i << " crosses box " << b << (s.boxes[b].open ? " (a title bar)" : "");
    }
    const SceneBox& to = s.boxes[std::size_t(edge.to)];
    const SceneBox& from = s.boxes[std::size_t(edge.from)];
    if (to.item.kind != Item::Node || g.node(to.item.id).op_type != "Add") continue;
    if (from.item.kind != Item::Node || g.node(from.item.id).op_type != "Relu") continue;
    ++skips;
    // A straight connector would have crossed the block's chain: the test is not vacuous.
    const Point p0{from.x + from.width / 2, from.y + from.height};
    const Point p3{to.x + to.width / 2, to.y};
    int in_the_way = 0;
    for (const SceneBox& b : s.boxes)
      if (!b.open && segment_enters(p0, p3, rect_of(b, header))) ++in_the_way;
    EXPECT_GE(in_the_way, 3);
    // And the route keeps a horizontal offset from the chain's column somewhere.
    double farthest = 0;
    for (const Point& p : edge.points) farthest = std::max(farthest, std::abs(p.x - p3.x));
    EXPECT_GT(farthest, to.width / 2);
  }
  EXPECT_EQ(skips, 3);
}

// An edge into an open frame enters through its top border beside the title, and one
// out of a frame leaves through its bottom border, at every depth: into a block (the
// stem's Relu feeds the first block's Conv and, as the skip, its Add), out of one block
// into the next, and out of the last block and the layer into the pool.
TEST(EdgeRouter, EdgesEnterFramesAtTheTopAndLeaveAtTheBottom) {
  for (int blocks : {1, 2, 3}) {
    Graph g = testing::residual_blocks(blocks);
    ScopeTree t(g);
    Expansion e(t.group_count());
    for (GroupId id = 0; id < GroupId(t.group_count()); ++id) e.set_open(id, true);
    HierarchicalLayout layout(g, t);
    const SceneLayout s = layout.compute(e);
    int into = 0, out_of = 0;
    for (const SceneEdge& edge : s.edges) {
      const SceneBox& a = s.boxes[std::size_t(edge.from)];
      const SceneBox& b = s.boxes[std::size_t(edge.to)];
      for (const SceneBox& f : s.boxes) {
        if (!f.open) continue;
        const Rect fr{f.x, f.y, f.width, f.height};
        const bool ha = frame_check::holds(fr, {a.x, a.y, a.width, a.height});
        const bool hb = frame_check::holds(fr, {b.x, b.y, b.width, b.height});
        into += hb && !ha;
        out_of += ha && !hb;
      }
    }
    EXPECT_GE(into, 2 * blocks);  // not vacuous: edges cross frames both ways
    EXPECT_GE(out_of, blocks);
    for (const std::string& v : frame_check::frame_rule_breaks(s, layout.frame_header()))
      ADD_FAILURE() << blocks << " blocks: " << v;
  }
}

// Frames are at least as wide as their one-line title measures, with a measure much
// wider than the character estimate (the old sizing clipped "106-op b…").
TEST(EdgeRouter, FrameTitlesFitTheirMeasuredWidth) {
  Graph g = testing::residual_blocks(2);
  ScopeTree t(g);
  Expansion e(t.group_count());
  for (GroupId id = 0; id < GroupId(t.group_count()); ++id) e.set_open(id, true);
  LabelMetrics m;
  m.text_width = [](const std::string& line, bool bold) {
    return double(line.size()) * (bold ? 13.0 : 12.0);
  };
  HierarchicalLayout layout(g, t, m);
  const SceneLayout s = layout.compute(e);
  int frames = 0;
  for (const SceneBox& b : s.boxes) {
    const auto lines = box_lines(g, t, b.item);
    if (b.open) {
      ++frames;
      EXPECT_GE(b.width, m.width_of(frame_title(lines), false) + 16);
    } else {
      for (const auto& l : lines) EXPECT_GE(b.width, m.width_of(l, b.item.kind == Item::Group));
    }
  }
  EXPECT_GE(frames, 3);
}

}  // namespace
}  // namespace fx::drawing
