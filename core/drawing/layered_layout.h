// SPDX-License-Identifier: Apache-2.0
#pragma once
// A layered (Sugiyama-style) layout of one level, top to bottom, for levels too wide for
// Graphviz dot: dot's network simplex and crossing minimisation grow close to cubically
// with the boxes of a level (docs/benchmarks.md, "Flat graphs"), while every phase here
// is linear or n log n per bounded pass:
//
//   cycles       edges closing a cycle (depth-first back edges) are laid out reversed
//   ranks        longest path from the sources; a source is then moved down next to its
//                first consumer, so that a constant read deep in the graph is not drawn
//                at the top with an edge across the whole picture
//   long edges   an edge over several ranks runs through one virtual node per rank,
//                shared: the edges that leave one box share a trunk, or, where a box
//                gathers more long edges than their sources send, they share the trunk
//                into it; a value read at every rank, and a Concat of values made at every
//                rank, each cost one chain, not one per edge (quadratic in the ranks)
//   order        barycenter sweeps down and up, a bounded number, keeping the order with
//                the fewest crossings (counted exactly, n log n per pair of ranks)
//   x            passes that pull each box toward its neighbours in L1 (a weighted
//                median; edges between virtual nodes weigh most, so long edges run
//                straight), each rank solved exactly under the order and the spacing
//                (isotonic regression)
//   edges        vertical straight runs through the ranks they cross and S-curves in the
//                gaps between ranks (a straight run is one segment however many ranks it
//                passes): no edge crosses a box; the ends of the edges of one box are
//                spread along its top or bottom in the order of the other ends
//
// Same contract as layout_with_dot (drawing/graphviz_layout.h): centres, y down, edges as
// cubic Bézier control points ending on the target box (has_arrow is false: the arrow
// head follows the last segment), edges with a bad index or from a box to itself left
// without points. Deterministic.

#include <cstddef>
#include <vector>

#include "drawing/graphviz_layout.h"

namespace fx::drawing {

LevelLayout layout_layered(const std::vector<Size>& boxes, const std::vector<LayoutEdge>& edges,
                           const LayoutSpacing& spacing = {});

// The most boxes a level is given to dot: above it, layout_layered. dot draws nicer
// splines and finds fewer crossings on small levels; its time on a level of this size is
// a fraction of a second, on levels a few times larger it is seconds to minutes.
inline constexpr std::size_t kMostBoxesForDot = 400;

// layout_with_dot up to kMostBoxesForDot boxes, layout_layered above.
LevelLayout layout_level(const std::vector<Size>& boxes, const std::vector<LayoutEdge>& edges,
                         const LayoutSpacing& spacing = {});

}  // namespace fx::drawing
