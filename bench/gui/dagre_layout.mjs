#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Lays out a graph with dagre the way Netron calls it (its grapher: nodesep 20,
// ranksep 20, top to bottom, longest-path ranking above 3,000 nodes), or with the
// settings the input names (model_explorer_render.py passes Model Explorer's).
//
//   node dagre_layout.mjs < graph.json > layout.json
//
// in:  {"nodes": [{"id", "width", "height"}], "edges": [{"v", "w", "width", "height", "minlen"}],
//       "graph": {dagre graph settings, optional}}
// out: {"nodes": [{"id", "x", "y", "width", "height"}],   (x, y: the centre)
//       "edges": [{"v", "w", "points": [{"x", "y"}], "x", "y"}], "width", "height", "ms"}
// An edge with a label size gets room for it from dagre (labelpos "r", offset 10), as
// Netron's tensor-shape labels do; its (x, y) is the label's centre.
import { readFileSync } from 'node:fs';
import dagre from '@dagrejs/dagre';

const input = JSON.parse(readFileSync(0, 'utf8'));
const g = new dagre.graphlib.Graph({ multigraph: true });
const layout = { nodesep: 20, ranksep: 20, rankdir: 'TB' };
if (input.nodes.length > 3000) layout.ranker = 'longest-path';
Object.assign(layout, input.graph || {});
g.setGraph(layout);
g.setDefaultEdgeLabel(() => ({}));
for (const n of input.nodes) g.setNode(n.id, { width: n.width, height: n.height });
input.edges.forEach((e, i) => {
  g.setEdge(e.v, e.w, {
    minlen: e.minlen || 1, weight: 1, width: e.width || 0, height: e.height || 0,
    labeloffset: 10, labelpos: 'r',
  }, `e${i}`);
});
const t0 = performance.now();
dagre.layout(g);
const ms = performance.now() - t0;
const out = { nodes: [], edges: [], width: g.graph().width, height: g.graph().height, ms };
for (const id of g.nodes()) {
  const n = g.node(id);
  out.nodes.push({ id, x: n.x, y: n.y, width: n.width, height: n.height });
}
input.edges.forEach((e, i) => {
  const l = g.edge({ v: e.v, w: e.w, name: `e${i}` });
  out.edges.push({ v: e.v, w: e.w, points: l.points, x: l.x, y: l.y });
});
process.stdout.write(JSON.stringify(out));
