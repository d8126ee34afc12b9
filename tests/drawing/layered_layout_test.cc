// SPDX-License-Identifier: Apache-2.0
// The layered layout of wide levels: ranks follow the edges, boxes never overlap, edges
// start and end on their boxes and pass through no other box, cycles are laid out, and a
// chain with residual skips stays a narrow column.
#include "drawing/layered_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "drawing/edge_router.h"

namespace fx::drawing {
namespace {

Rect rect_of(const BoxPlacement& b) {
  return {b.centre.x - b.size.width / 2, b.centre.y - b.size.height / 2, b.size.width,
          b.size.height};
}

bool overlap(const Rect& a, const Rect& b) {
  return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}

bool on_border(Point p, const Rect& r) {
  constexpr double eps = 1e-6;
  const bool inside_x = p.x >= r.x - eps && p.x <= r.right() + eps;
  const bool inside_y = p.y >= r.y - eps && p.y <= r.bottom() + eps;
  return inside_x && inside_y &&
         (std::abs(p.y - r.y) < eps || std::abs(p.y - r.bottom()) < eps ||
          std::abs(p.x - r.x) < eps || std::abs(p.x - r.right()) < eps);
}

// Blocks of (Relu, Relu, Add) where the Add also reads the block's input: the shape of a
// scope-less ResNet's level.
void residual_chain(int blocks, std::vector<Size>& boxes, std::vector<LayoutEdge>& edges) {
  int32_t x = 0;
  boxes.push_back({80, 30});
  for (int b = 0; b < blocks; ++b) {
    const auto r1 = int32_t(boxes.size());
    boxes.insert(boxes.end(), {{60, 25}, {60, 25}, {70, 40}});
    edges.push_back({x, r1});
    edges.push_back({r1, r1 + 1});
    edges.push_back({r1 + 1, r1 + 2});
    edges.push_back({x, r1 + 2});
    x = r1 + 2;
  }
}

// A random DAG in topological order: every box reads one to three earlier boxes, some
// from far back (long edges, shared by readers of one box), some boxes read by many.
void random_dag(int n, unsigned seed, std::vector<Size>& boxes, std::vector<LayoutEdge>& edges) {
  std::mt19937 rng(seed);
  for (int i = 0; i < n; ++i) {
    boxes.push_back({double(60 + rng() % 90), double(25 + rng() % 40)});
    if (i == 0) continue;
    const int reads = 1 + int(rng() % 3);
    for (int k = 0; k < reads; ++k) {
      const int back =
          rng() % 4 == 0 ? 1 + int(rng() % unsigned(i)) : 1 + int(rng() % unsigned(std::min(i, 3)));
      edges.push_back({int32_t(i - back), int32_t(i)});
    }
  }
}

void expect_invariants(const std::vector<Size>& boxes, const std::vector<LayoutEdge>& edges,
                       const LevelLayout& l, bool acyclic) {
  ASSERT_EQ(l.boxes.size(), boxes.size());
  ASSERT_EQ(l.edges.size(), edges.size());
  std::vector<Rect> rects;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const Rect r = rect_of(l.boxes[i]);
    ASSERT_TRUE(std::isfinite(r.x) && std::isfinite(r.y));
    EXPECT_EQ(l.boxes[i].size.width, boxes[i].width);
    EXPECT_GE(r.x, -1e-6);
    EXPECT_GE(r.y, -1e-6);
    EXPECT_LE(r.right(), l.size.width + 1e-6);
    EXPECT_LE(r.bottom(), l.size.height + 1e-6);
    rects.push_back(r);
  }
  for (std::size_t i = 0; i < rects.size(); ++i)
    for (std::size_t j = i + 1; j < rects.size(); ++j)
      ASSERT_FALSE(overlap(rects[i], rects[j])) << "boxes " << i << " and " << j << " overlap";
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const LayoutEdge& e = edges[i];
    const EdgePath& p = l.edges[i];
    EXPECT_EQ(p.from, e.from);
    EXPECT_EQ(p.to, e.to);
    if (e.from == e.to) {
      EXPECT_TRUE(p.points.empty());
      continue;
    }
    if (acyclic) {
      // Ranks respect the edges: the consumer is drawn below its producer.
      EXPECT_LT(rects[std::size_t(e.from)].bottom(), rects[std::size_t(e.to)].y) << "edge " << i;
    }
    ASSERT_GE(p.points.size(), 4u);
    ASSERT_EQ(p.points.size() % 3, 1u);
    EXPECT_TRUE(on_border(p.points.front(), rects[std::size_t(e.from)])) << "edge " << i;
    EXPECT_TRUE(on_border(p.points.back(), rects[std::size_t(e.to)])) << "edge " << i;
    for (const Point& q : p.points) {
      EXPECT_GE(q.x, -1e-6);
      EXPECT_LE(q.x, l.size.width + 1e-6);
    }
  }
}

// Edges pass through no box but their own two.
void expect_edges_clear_of_boxes(const std::vector<LayoutEdge>& edges, const LevelLayout& l) {
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (l.edges[i].points.empty()) continue;
    for (std::size_t b = 0; b < l.boxes.size(); ++b) {
      if (int32_t(b) == edges[i].from || int32_t(b) == edges[i].to) continue;
      // Shrunk by a hair so that touching is not entering.
      Rect r = rect_of(l.boxes[b]);
      r = {r.x + 0.5, r.y + 0.5, r.width - 1, r.height - 1};
      ASSERT_FALSE(bezier_enters(l.edges[i].points, r)) << "edge " << i << " crosses box " << b;
    }
  }
}

TEST(LayeredLayout, ResidualChainKeepsTheInvariantsAndStaysANarrowColumn) {
  std::vector<Size> boxes;
  std::vector<LayoutEdge> edges;
  residual_chain(200, boxes, edges);
  const LevelLayout l = layout_layered(boxes, edges);
  expect_invariants(boxes, edges, l, true);
  expect_edges_clear_of_boxes(edges, l);
  // One rank per op: 1 + 3 per block, each rank as tall as its tallest box.
  LayoutSpacing spacing;
  EXPECT_NEAR(l.size.height, 30 + 200 * (25 + 25 + 40) + 600 * spacing.rank_sep, 1e-6);
  // The chain and its skips side by side, not spread over the width of a long level.
  EXPECT_LT(l.size.width, 3 * 80 + 2 * spacing.node_sep);
}

TEST(LayeredLayout, RandomDagsKeepTheInvariants) {
  for (unsigned seed : {1u, 2u, 3u}) {
    std::vector<Size> boxes;
    std::vector<LayoutEdge> edges;
    random_dag(150, seed, boxes, edges);
    const LevelLayout l = layout_layered(boxes, edges);
    SCOPED_TRACE(seed);
    expect_invariants(boxes, edges, l, true);
    expect_edges_clear_of_boxes(edges, l);
  }
}

TEST(LayeredLayout, CyclesBadEdgesAndLoneBoxesAreLaidOut) {
  // 0 -> 1 -> 2 -> 0 (a cycle between aggregated groups), 3 alone, a self edge and an
  // edge to a box that does not exist.
  const std::vector<Size> boxes(4, Size{60, 30});
  const std::vector<LayoutEdge> edges = {{0, 1}, {1, 2}, {2, 0}, {2, 2}, {1, 9}};
  const LevelLayout l = layout_layered(boxes, edges);
  expect_invariants(boxes, {edges.begin(), edges.begin() + 4},
                    {l.boxes, {l.edges.begin(), l.edges.begin() + 4}, l.size}, false);
  EXPECT_TRUE(l.edges[4].points.empty());
  // The edge that closes the cycle runs upward, from 2 to 0.
  EXPECT_LT(l.boxes[0].centre.y, l.boxes[2].centre.y);
  EXPECT_GT(l.edges[2].points.front().y, l.edges[2].points.back().y);
}

TEST(LayeredLayout, AValueReadAtManyRanksIsOneTrunk) {
  // Box 0 feeds every box of a long chain: without a shared trunk the level would be as
  // wide as the chain is long.
  std::vector<Size> boxes(1, Size{60, 30});
  std::vector<LayoutEdge> edges;
  for (int32_t i = 1; i <= 300; ++i) {
    boxes.push_back({60, 30});
    edges.push_back({i - 1, i});
    if (i > 1) edges.push_back({0, i});
  }
  const LevelLayout l = layout_layered(boxes, edges);
  expect_invariants(boxes, edges, l, true);
  EXPECT_LT(l.size.width, 4 * 60.0);
}

TEST(LayeredLayout, ValuesMadeAtManyRanksGatheredByOneBoxShareItsTrunk) {
  // Every box of a long chain also feeds the last one (a Concat of every step's output):
  // without a shared trunk into the last box the level would be as wide as the chain is
  // long, and the edges' points quadratic in it.
  const int32_t n = 300;
  std::vector<Size> boxes(std::size_t(n), Size{60, 30});
  std::vector<LayoutEdge> edges;
  for (int32_t i = 1; i < n; ++i) {
    edges.push_back({i - 1, i});
    if (i < n - 1) edges.push_back({i, n - 1});
  }
  const LevelLayout l = layout_layered(boxes, edges);
  expect_invariants(boxes, edges, l, true);
  expect_edges_clear_of_boxes(edges, l);
  EXPECT_LT(l.size.width, 4 * 60.0);
  // Down the straight trunk, an edge is a few segments however many ranks it passes.
  for (const EdgePath& e : l.edges) EXPECT_LE(e.points.size(), 16u);
}

TEST(LayeredLayout, IsDeterministic) {
  std::vector<Size> boxes;
  std::vector<LayoutEdge> edges;
  random_dag(300, 7, boxes, edges);
  const LevelLayout a = layout_layered(boxes, edges), b = layout_layered(boxes, edges);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    EXPECT_EQ(a.boxes[i].centre.x, b.boxes[i].centre.x);
    EXPECT_EQ(a.boxes[i].centre.y, b.boxes[i].centre.y);
  }
}

TEST(LayeredLayout, SmallLevelsGoToDotLargeOnesToTheLayeredLayout) {
  // A level of kMostBoxesForDot + 1 boxes comes back with the layered layout's straight
  // ends (dot's splines end in an arrow tip; ours end on the box).
  for (std::size_t n : {kMostBoxesForDot, kMostBoxesForDot + 1}) {
    std::vector<Size> boxes(n, Size{60, 30});
    std::vector<LayoutEdge> edges;
    for (std::size_t i = 1; i < n; ++i) edges.push_back({int32_t(i - 1), int32_t(i)});
    const LevelLayout l = layout_level(boxes, edges);
    EXPECT_EQ(l.edges.front().has_arrow, n <= kMostBoxesForDot) << n;
  }
}

}  // namespace
}  // namespace fx::drawing
