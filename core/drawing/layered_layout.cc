// SPDX-License-Identifier: Apache-2.0
#include "drawing/layered_layout.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace fx::drawing {
namespace {

// Bounds on the iterative phases: each pass is linear (n log n for ordering), so these
// bound the whole layout. Ordering stops earlier once a few sweeps bring no fewer
// crossings.
constexpr int kMostOrderSweeps = 16;
constexpr int kSweepsWithoutGain = 4;
constexpr int kPlacementPasses = 8;

// Weight of an edge when a box is pulled toward its neighbours, as dot weighs them:
// edges between virtual nodes most, so that long edges run straight.
double pull_weight(bool a_virtual, bool b_virtual) {
  return a_virtual && b_virtual ? 8 : a_virtual || b_virtual ? 2 : 1;
}

// The boxes and the virtual nodes of long edges, ranked and ordered.
struct Layers {
  std::size_t real = 0;                        // nodes [0, real) are boxes, the rest virtual
  std::vector<int32_t> rank;                   // per node
  std::vector<double> width, height;           // virtual nodes: 0
  std::vector<std::vector<int32_t>> up, down;  // neighbours one rank above / below
  std::vector<std::vector<int32_t>> order;     // per rank, left to right
  std::vector<int32_t> pos;                    // index in its rank's order
  std::vector<double> x;                       // centre

  bool is_virtual(int32_t v) const { return std::size_t(v) >= real; }
  std::size_t size() const { return rank.size(); }
};

// Marks the edges that close a cycle (depth-first back edges, from box 0 up) so that the
// rest is acyclic once they are reversed.
std::vector<bool> back_edges(std::size_t n, const std::vector<LayoutEdge>& edges,
                             const std::vector<bool>& valid) {
  std::vector<std::vector<int32_t>> out(n);
  for (std::size_t i = 0; i < edges.size(); ++i)
    if (valid[i]) out[std::size_t(edges[i].from)].push_back(int32_t(i));
  std::vector<bool> back(edges.size(), false);
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<int32_t, std::size_t>> stack;
  for (std::size_t s = 0; s < n; ++s) {
    if (state[s]) continue;
    stack.push_back({int32_t(s), 0});
    state[s] = 1;
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      const auto& outs = out[std::size_t(u)];
      if (next == outs.size()) {
        state[std::size_t(u)] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t e = outs[next++];
      const auto w = std::size_t(edges[std::size_t(e)].to);
      if (state[w] == 1)
        back[std::size_t(e)] = true;
      else if (state[w] == 0) {
        state[w] = 1;
        stack.push_back({int32_t(w), 0});
      }
    }
  }
  return back;
}

// Longest path from the sources, then each source moved down next to its first consumer.
std::vector<int32_t> rank_boxes(std::size_t n,
                                const std::vector<std::pair<int32_t, int32_t>>& dag) {
  std::vector<std::vector<int32_t>> succ(n);
  std::vector<int32_t> indegree(n, 0);
  for (const auto& [a, b] : dag) {
    succ[std::size_t(a)].push_back(b);
    ++indegree[std::size_t(b)];
  }
  std::vector<int32_t> rank(n, 0), queue;
  queue.reserve(n);
  for (std::size_t v = 0; v < n; ++v)
    if (indegree[v] == 0) queue.push_back(int32_t(v));
  std::vector<int32_t> remaining = indegree;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const auto u = std::size_t(queue[head]);
    for (int32_t w : succ[u]) {
      rank[std::size_t(w)] = std::max(rank[std::size_t(w)], rank[u] + 1);
      if (--remaining[std::size_t(w)] == 0) queue.push_back(w);
    }
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (indegree[v] != 0 || succ[v].empty()) continue;
    int32_t first = std::numeric_limits<int32_t>::max();
    for (int32_t w : succ[v]) first = std::min(first, rank[std::size_t(w)]);
    rank[v] = first - 1;
  }
  // When every source moved down, rank 0 is empty: start at the first rank used.
  const int32_t top = *std::min_element(rank.begin(), rank.end());
  for (int32_t& r : rank) r -= top;
  return rank;
}

// Fenwick-tree inversion count: the crossings between rank r and rank r + 1.
int64_t crossings_below(const Layers& L, std::size_t r, std::vector<int32_t>& scratch,
                        std::vector<int32_t>& tree) {
  const std::size_t below = L.order[r + 1].size();
  tree.assign(below + 1, 0);
  int64_t crossings = 0;
  int64_t seen = 0;
  for (int32_t u : L.order[r]) {
    scratch.clear();
    for (int32_t w : L.down[std::size_t(u)]) scratch.push_back(L.pos[std::size_t(w)]);
    std::sort(scratch.begin(), scratch.end());
    for (int32_t p : scratch) {
      // Edges already seen that end right of p cross this one.
      int64_t at_or_left = 0;
      for (auto i = std::size_t(p) + 1; i > 0; i -= i & (~i + 1)) at_or_left += tree[i];
      crossings += seen - at_or_left;
      for (auto i = std::size_t(p) + 1; i <= below; i += i & (~i + 1)) ++tree[i];
      ++seen;
    }
  }
  return crossings;
}

int64_t crossings(const Layers& L) {
  std::vector<int32_t> scratch, tree;
  int64_t total = 0;
  for (std::size_t r = 0; r + 1 < L.order.size(); ++r)
    total += crossings_below(L, r, scratch, tree);
  return total;
}

void renumber(Layers& L, std::size_t r) {
  for (std::size_t i = 0; i < L.order[r].size(); ++i)
    L.pos[std::size_t(L.order[r][i])] = int32_t(i);
}

// Sorts rank r by the mean position of each node's neighbours in the rank above (or
// below); nodes without such neighbours keep their places.
void sort_by_barycenter(Layers& L, std::size_t r, bool from_above) {
  auto& row = L.order[r];
  std::vector<std::pair<double, int32_t>> keyed;
  std::vector<bool> fixed(row.size(), false);
  for (std::size_t i = 0; i < row.size(); ++i) {
    const auto& nb = from_above ? L.up[std::size_t(row[i])] : L.down[std::size_t(row[i])];
    if (nb.empty()) {
      fixed[i] = true;
      continue;
    }
    double sum = 0;
    for (int32_t w : nb) sum += L.pos[std::size_t(w)];
    keyed.push_back({sum / double(nb.size()), row[i]});
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t k = 0;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (!fixed[i]) row[i] = keyed[k++].second;
  renumber(L, r);
}

void order_ranks(Layers& L) {
  // Initial order: depth-first from the boxes in input order (topological for a model's
  // level), so a chain is one column and its branches sit beside it.
  std::vector<bool> seen(L.size(), false);
  std::vector<int32_t> stack;
  for (std::size_t s = 0; s < L.real; ++s) {
    if (seen[s]) continue;
    stack.push_back(int32_t(s));
    while (!stack.empty()) {
      const auto u = std::size_t(stack.back());
      stack.pop_back();
      if (seen[u]) continue;
      seen[u] = true;
      L.order[std::size_t(L.rank[u])].push_back(int32_t(u));
      for (auto it = L.down[u].rbegin(); it != L.down[u].rend(); ++it)
        if (!seen[std::size_t(*it)]) stack.push_back(*it);
    }
  }
  for (std::size_t r = 0; r < L.order.size(); ++r) renumber(L, r);

  auto best_order = L.order;
  int64_t best = crossings(L);
  int without_gain = 0;
  for (int sweep = 0; sweep < kMostOrderSweeps && best > 0 && without_gain < kSweepsWithoutGain;
       ++sweep) {
    if (sweep % 2 == 0)
      for (std::size_t r = 1; r < L.order.size(); ++r) sort_by_barycenter(L, r, true);
    else
      for (std::size_t r = L.order.size() - 1; r-- > 0;) sort_by_barycenter(L, r, false);
    const int64_t c = crossings(L);
    if (c < best) {
      best = c;
      best_order = L.order;
      without_gain = 0;
    } else {
      ++without_gain;
    }
  }
  L.order = std::move(best_order);
  for (std::size_t r = 0; r < L.order.size(); ++r) renumber(L, r);
}

// Places one rank under its order: minimises sum w |x_i - x_neighbour| over the edges to
// the neighbours used, subject to x_{i+1} >= x_i + gap_i. The L1 objective (dot's, too)
// keeps chains straight: with squares, the pull of a fan-out edge beside a chain tilts
// the whole chain a little per rank, and a long chain drifts across the picture. Solved
// exactly by pool-adjacent-violators on x_i - offset_i, a block's value being the
// weighted median of its points (the middle of the median interval, so that a box
// between two equal pulls is centred).
struct WeightedPoint {
  double at, weight;
  bool operator<(const WeightedPoint& o) const { return at < o.at; }
};

double weighted_median(const std::vector<WeightedPoint>& sorted, double total) {
  const double half = total / 2, eps = total * 1e-9;
  double cum = 0, low = sorted.back().at;
  std::size_t i = 0;
  for (; i < sorted.size(); ++i) {
    cum += sorted[i].weight;
    if (cum >= half - eps) {
      low = sorted[i].at;
      break;
    }
  }
  if (cum > half + eps || i + 1 >= sorted.size()) return low;
  return (low + sorted[i + 1].at) / 2;  // cum == half: the interval up to the next point
}

void place_rank(Layers& L, std::size_t r, bool use_up, bool use_down, double node_sep) {
  const auto& row = L.order[r];
  const std::size_t n = row.size();
  if (n == 0) return;
  struct Block {
    std::size_t begin;
    std::vector<WeightedPoint> points;  // sorted
    double total = 0, value = 0;
  };
  std::vector<Block> blocks;
  std::vector<double> offset(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = std::size_t(row[i]);
    if (i > 0) {
      const auto u = std::size_t(row[i - 1]);
      const bool both_virtual = L.is_virtual(int32_t(u)) && L.is_virtual(int32_t(v));
      offset[i] =
          offset[i - 1] + (L.width[u] + L.width[v]) / 2 + (both_virtual ? node_sep / 2 : node_sep);
    }
    Block block{i, {}, 0, 0};
    auto pull = [&](const std::vector<int32_t>& nb) {
      for (int32_t w : nb) {
        const double wt = pull_weight(L.is_virtual(int32_t(v)), L.is_virtual(w));
        block.points.push_back({L.x[std::size_t(w)] - offset[i], wt});
        block.total += wt;
      }
    };
    if (use_up) pull(L.up[v]);
    if (use_down) pull(L.down[v]);
    // A node with no neighbours on that side stays near where it is.
    if (block.points.empty()) {
      block.points.push_back({L.x[v] - offset[i], 0.01});
      block.total = 0.01;
    }
    std::sort(block.points.begin(), block.points.end());
    block.value = weighted_median(block.points, block.total);
    blocks.push_back(std::move(block));
    while (blocks.size() >= 2 && blocks[blocks.size() - 2].value > blocks.back().value) {
      Block top = std::move(blocks.back());
      blocks.pop_back();
      Block& into = blocks.back();
      const auto middle = long(into.points.size());
      into.points.insert(into.points.end(), top.points.begin(), top.points.end());
      std::inplace_merge(into.points.begin(), into.points.begin() + middle, into.points.end());
      into.total += top.total;
      into.value = weighted_median(into.points, into.total);
    }
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const std::size_t end = b + 1 < blocks.size() ? blocks[b + 1].begin : n;
    for (std::size_t i = blocks[b].begin; i < end; ++i)
      L.x[std::size_t(row[i])] = blocks[b].value + offset[i];
  }
}

void place_x(Layers& L, double node_sep) {
  // Start packed and centred, then pull toward the neighbours: alternately from above
  // and from below, and last from both sides.
  for (std::size_t r = 0; r < L.order.size(); ++r) place_rank(L, r, false, false, node_sep);
  for (int pass = 0; pass < kPlacementPasses; ++pass) {
    if (pass % 2 == 0)
      for (std::size_t r = 1; r < L.order.size(); ++r) place_rank(L, r, true, false, node_sep);
    else
      for (std::size_t r = L.order.size() - 1; r-- > 0;) place_rank(L, r, false, true, node_sep);
  }
  for (std::size_t r = 0; r < L.order.size(); ++r) place_rank(L, r, true, true, node_sep);
}

// Builds cubic Bézier control points: straight runs and vertical S-curves. Consecutive
// vertical runs are one segment, so that an edge down a shared trunk costs a few points,
// not a few per rank.
class PathBuilder {
 public:
  explicit PathBuilder(Point start) { points_.push_back(start); }
  void line_to(Point q) {
    const Point p = points_.back();
    if (p.x == q.x && p.y == q.y) return;
    if (vertical_run_ && p.x == q.x) {
      points_.resize(points_.size() - 3);  // extend the run from its start
      line_from(points_.back(), q);
      return;
    }
    line_from(p, q);
    vertical_run_ = p.x == q.x;
  }
  void curve_to(Point q) {
    const Point p = points_.back();
    if (p.x == q.x) return line_to(q);
    const double half = (q.y - p.y) / 2;
    points_.push_back({p.x, p.y + half});
    points_.push_back({q.x, q.y - half});
    points_.push_back(q);
    vertical_run_ = false;
  }
  std::vector<Point> take() { return std::move(points_); }

 private:
  void line_from(Point p, Point q) {
    points_.push_back({p.x + (q.x - p.x) / 3, p.y + (q.y - p.y) / 3});
    points_.push_back({p.x + 2 * (q.x - p.x) / 3, p.y + 2 * (q.y - p.y) / 3});
    points_.push_back(q);
  }
  std::vector<Point> points_;
  bool vertical_run_ = false;
};

}  // namespace

LevelLayout layout_layered(const std::vector<Size>& boxes, const std::vector<LayoutEdge>& edges,
                           const LayoutSpacing& spacing) {
  LevelLayout out;
  const std::size_t n = boxes.size();
  out.boxes.resize(n);
  out.edges.resize(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    out.edges[i].from = edges[i].from;
    out.edges[i].to = edges[i].to;
  }
  if (n == 0) return out;

  std::vector<bool> valid(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const LayoutEdge& e = edges[i];
    valid[i] = e.from >= 0 && e.to >= 0 && std::size_t(e.from) < n && std::size_t(e.to) < n &&
               e.from != e.to;
  }
  const std::vector<bool> reversed = back_edges(n, edges, valid);
  // Each valid edge as laid out: from the box ranked above to the one below.
  std::vector<std::pair<int32_t, int32_t>> dag;
  std::vector<int32_t> dag_of_edge(edges.size(), -1);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (!valid[i]) continue;
    dag_of_edge[i] = int32_t(dag.size());
    dag.push_back(reversed[i] ? std::pair{edges[i].to, edges[i].from}
                              : std::pair{edges[i].from, edges[i].to});
  }

  Layers L;
  L.real = n;
  L.rank = rank_boxes(n, dag);
  L.width.resize(n);
  L.height.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    L.width[i] = std::max(1.0, boxes[i].width);
    L.height[i] = std::max(1.0, boxes[i].height);
  }

  // Long edges run through virtual nodes, shared: an edge joins the trunk of its source
  // (from the rank below it down to its farthest reader) or, when its target gathers
  // more long edges than its source sends, the trunk of its target (from the rank below
  // its farthest producer down to it). A value read at every rank, and a Concat of
  // values made at every rank, each cost one chain, not one per edge (which would be
  // quadratic in the ranks).
  std::vector<std::pair<int32_t, int32_t>> pairs = dag;
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  auto span_of = [&](const std::pair<int32_t, int32_t>& e) {
    return L.rank[std::size_t(e.second)] - L.rank[std::size_t(e.first)];
  };
  std::vector<int32_t> long_out(n, 0), long_in(n, 0);
  for (const auto& e : pairs)
    if (span_of(e) > 1) ++long_out[std::size_t(e.first)], ++long_in[std::size_t(e.second)];
  auto via_target = [&](const std::pair<int32_t, int32_t>& e) {
    return long_in[std::size_t(e.second)] > long_out[std::size_t(e.first)];
  };
  // Source trunks reach down to out_reach - 1, target trunks up to in_reach + 1.
  std::vector<int32_t> out_reach(n), in_reach(n);
  for (std::size_t v = 0; v < n; ++v) out_reach[v] = in_reach[v] = L.rank[v];
  for (const auto& e : pairs) {
    if (span_of(e) <= 1) continue;
    const auto a = std::size_t(e.first), b = std::size_t(e.second);
    if (via_target(e))
      in_reach[b] = std::min(in_reach[b], L.rank[a]);
    else
      out_reach[a] = std::max(out_reach[a], L.rank[b]);
  }
  std::vector<int32_t> first_out(n, -1), first_in(n, -1);
  L.up.resize(n);
  L.down.resize(n);
  auto link = [&](int32_t a, int32_t b) {
    L.down[std::size_t(a)].push_back(b);
    L.up[std::size_t(b)].push_back(a);
  };
  // A chain of virtual nodes on ranks [from, to), linked top to bottom; its first id.
  auto add_chain = [&](int32_t from, int32_t to) {
    const auto first = int32_t(L.rank.size());
    for (int32_t r = from; r < to; ++r) {
      L.rank.push_back(r);
      L.width.push_back(0);
      L.height.push_back(0);
      L.up.emplace_back();
      L.down.emplace_back();
      if (r > from) link(int32_t(L.rank.size()) - 2, int32_t(L.rank.size()) - 1);
    }
    return first;
  };
  for (std::size_t v = 0; v < n; ++v) {
    const int32_t r = L.rank[v];
    if (out_reach[v] - r > 1) {
      first_out[v] = add_chain(r + 1, out_reach[v]);
      link(int32_t(v), first_out[v]);
    }
    if (r - in_reach[v] > 1) {
      first_in[v] = add_chain(in_reach[v] + 1, r);
      link(first_in[v] + (r - in_reach[v] - 2), int32_t(v));
    }
  }
  // The virtual node an edge passes at rank r (between its ends).
  auto virtual_at = [&](const std::pair<int32_t, int32_t>& e, int32_t r) {
    const auto a = std::size_t(e.first), b = std::size_t(e.second);
    return via_target(e) ? first_in[b] + (r - in_reach[b] - 1) : first_out[a] + (r - L.rank[a] - 1);
  };
  for (const auto& e : pairs) {
    const int32_t span = span_of(e);
    if (span == 1)
      link(e.first, e.second);
    else if (via_target(e))
      link(e.first, virtual_at(e, L.rank[std::size_t(e.first)] + 1));
    else
      link(virtual_at(e, L.rank[std::size_t(e.second)] - 1), e.second);
  }

  int32_t ranks = 0;
  for (int32_t r : L.rank) ranks = std::max(ranks, r + 1);
  L.order.resize(std::size_t(ranks));
  L.pos.assign(L.size(), 0);
  L.x.assign(L.size(), 0);
  order_ranks(L);
  place_x(L, spacing.node_sep);

  // Ranks are as tall as their tallest box; boxes are centred in them.
  std::vector<double> rank_top(std::size_t(ranks), 0), rank_height(std::size_t(ranks), 0);
  for (std::size_t v = 0; v < n; ++v)
    rank_height[std::size_t(L.rank[v])] =
        std::max(rank_height[std::size_t(L.rank[v])], L.height[v]);
  for (std::size_t r = 1; r < rank_top.size(); ++r)
    rank_top[r] = rank_top[r - 1] + rank_height[r - 1] + spacing.rank_sep;
  double left = std::numeric_limits<double>::max(), right = std::numeric_limits<double>::lowest();
  for (std::size_t v = 0; v < L.size(); ++v) {
    left = std::min(left, L.x[v] - L.width[v] / 2);
    right = std::max(right, L.x[v] + L.width[v] / 2);
  }
  for (double& x : L.x) x -= left;
  out.size = {right - left, rank_top.back() + rank_height.back()};
  auto centre_y = [&](std::size_t v) {
    const auto r = std::size_t(L.rank[v]);
    return rank_top[r] + rank_height[r] / 2;
  };
  for (std::size_t v = 0; v < n; ++v) {
    out.boxes[v].centre = {L.x[v], centre_y(v)};
    out.boxes[v].size = boxes[v];
  }

  // Where an edge leaves or enters a box: its ends spread along the box side in the order
  // of the nodes at their other ends.
  auto port_x = [&](int32_t v, int32_t other, bool below) {
    const double x = L.x[std::size_t(v)];
    if (L.is_virtual(v)) return x;
    const auto& nb = below ? L.down[std::size_t(v)] : L.up[std::size_t(v)];
    if (nb.size() < 2) return x;
    std::size_t k = 0;
    for (int32_t w : nb)
      if (L.x[std::size_t(w)] < L.x[std::size_t(other)] ||
          (L.x[std::size_t(w)] == L.x[std::size_t(other)] && w < other))
        ++k;
    const double spread = std::min(0.6 * L.width[std::size_t(v)], 16.0 * double(nb.size() - 1));
    return x - spread / 2 + spread * double(k) / double(nb.size() - 1);
  };
  // Where the straight part of a trunk through virtual node v ends: the last rank below
  // it that the trunk passes at the same x. Edges jump along it, so that drawing an edge
  // costs its bends, not its ranks.
  std::vector<int32_t> run_end(L.size());
  for (std::size_t v = L.size(); v-- > n;) {
    const std::size_t next = v + 1;
    const bool same_run =
        next < L.size() && L.rank[next] == L.rank[v] + 1 && L.x[next] == L.x[v] &&
        std::find(L.down[v].begin(), L.down[v].end(), int32_t(next)) != L.down[v].end();
    run_end[v] = same_run ? run_end[next] : L.rank[v];
  }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (dag_of_edge[i] < 0) continue;
    const auto [a, b] = dag[std::size_t(dag_of_edge[i])];
    const int32_t ra = L.rank[std::size_t(a)], rb = L.rank[std::size_t(b)];
    const auto ua = std::size_t(a), ub = std::size_t(b);
    const int32_t after_a = rb - ra > 1 ? virtual_at({a, b}, ra + 1) : b;
    const int32_t before_b = rb - ra > 1 ? virtual_at({a, b}, rb - 1) : a;
    const double start_x = port_x(a, after_a, true);
    PathBuilder path({start_x, centre_y(ua) + L.height[ua] / 2});
    path.line_to({start_x, rank_top[std::size_t(ra)] + rank_height[std::size_t(ra)]});
    for (int32_t r = ra + 1; r < rb;) {
      const auto v = std::size_t(virtual_at({a, b}, r));
      const auto last = std::size_t(std::min(run_end[v], rb - 1));
      path.curve_to({L.x[v], rank_top[std::size_t(r)]});
      path.line_to({L.x[v], rank_top[last] + rank_height[last]});
      r = int32_t(last) + 1;
    }
    const double end_x = port_x(b, before_b, false);
    path.curve_to({end_x, rank_top[std::size_t(rb)]});
    path.line_to({end_x, centre_y(ub) - L.height[ub] / 2});
    EdgePath& e = out.edges[i];
    e.points = path.take();
    if (reversed[i]) std::reverse(e.points.begin(), e.points.end());
  }
  return out;
}

LevelLayout layout_level(const std::vector<Size>& boxes, const std::vector<LayoutEdge>& edges,
                         const LayoutSpacing& spacing) {
  return boxes.size() <= kMostBoxesForDot ? layout_with_dot(boxes, edges, spacing)
                                          : layout_layered(boxes, edges, spacing);
}

}  // namespace fx::drawing
