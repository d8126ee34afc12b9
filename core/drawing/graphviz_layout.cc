// SPDX-License-Identifier: Apache-2.0
#include "drawing/graphviz_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "util/error.h"

namespace fx::drawing {
namespace {

std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

// One context for the process: creating it loads the plugin configuration, which
// costs milliseconds we do not want to pay on every expand.
GVC_t* context() {
  static GVC_t* gvc = [] {
    agseterr(AGMAX);  // keep Graphviz quiet on stderr; failures surface as return codes
    return gvContext();
  }();
  return gvc;
}

std::string fmt_inches(double points) {
  return std::to_string(points / 72.0);
}

void set(void* obj, const char* name, const std::string& value) {
  agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

}  // namespace

LevelLayout layout_with_dot(const std::vector<Size>& boxes, const std::vector<LayoutEdge>& edges,
                            const LayoutSpacing& spacing) {
  LevelLayout out;
  out.boxes.resize(boxes.size());
  out.edges.resize(edges.size());
  if (boxes.empty()) return out;

  std::lock_guard lock(graphviz_mutex());
  GVC_t* gvc = context();
  Agraph_t* g = agopen(const_cast<char*>("level"), Agdirected, nullptr);
  set(g, "rankdir", "TB");
  set(g, "nodesep", fmt_inches(spacing.node_sep));
  set(g, "ranksep", fmt_inches(spacing.rank_sep));
  set(g, "splines", "spline");
  // Fewer crossing-minimization passes: the default spends seconds on wide levels
  // for a barely better picture.
  set(g, "mclimit", "0.5");

  std::vector<Agnode_t*> nodes(boxes.size());
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    std::string name = "n" + std::to_string(i);
    nodes[i] = agnode(g, name.data(), 1);
    set(nodes[i], "shape", "box");
    set(nodes[i], "fixedsize", "true");
    set(nodes[i], "label", "");
    set(nodes[i], "width", fmt_inches(std::max(1.0, boxes[i].width)));
    set(nodes[i], "height", fmt_inches(std::max(1.0, boxes[i].height)));
  }
  std::vector<Agedge_t*> agedges(edges.size(), nullptr);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const LayoutEdge& e = edges[i];
    if (e.from < 0 || e.to < 0 || std::size_t(e.from) >= boxes.size() ||
        std::size_t(e.to) >= boxes.size() || e.from == e.to)
      continue;
    std::string key = "e" + std::to_string(i);
    agedges[i] = agedge(g, nodes[std::size_t(e.from)], nodes[std::size_t(e.to)], key.data(), 1);
  }

  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    throw Error("graph layout: Graphviz dot failed on a level of " + std::to_string(boxes.size()) +
                " boxes");
  }
  const boxf bb = GD_bb(g);
  const double top = bb.UR.y;
  auto flip = [&](pointf p) { return Point{p.x - bb.LL.x, top - p.y}; };
  out.size = {bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y};
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    out.boxes[i].centre = flip(ND_coord(nodes[i]));
    out.boxes[i].size = boxes[i];
  }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    EdgePath& path = out.edges[i];
    path.from = edges[i].from;
    path.to = edges[i].to;
    if (!agedges[i] || !ED_spl(agedges[i]) || ED_spl(agedges[i])->size == 0) continue;
    const bezier& bz = ED_spl(agedges[i])->list[0];
    path.points.reserve(std::size_t(bz.size));
    for (int k = 0; k < bz.size; ++k) path.points.push_back(flip(bz.list[k]));
    if (bz.eflag) {
      path.has_arrow = true;
      path.arrow_tip = flip(bz.ep);
    }
  }
  gvFreeLayout(gvc, g);
  agclose(g);
  return out;
}

}  // namespace fx::drawing
