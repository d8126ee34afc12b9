#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Draws an ONNX model the way Model Explorer lays it out, as a PNG: a reproduction of
Model Explorer's layout from its source, not a screenshot of Model Explorer.

  bench/gui/install.sh                 # once: npm install of @dagrejs/dagre
  model_explorer_render.py MODEL.onnx --out me.png [--expand-all | --expand NAME ...]
                           [--view 1234x889] [--full full.png]

Model Explorer (google-ai-edge/model-explorer) is a browser app; this machine has no
browser. What is reproduced here was read in its source (webapp worker: graph_processor.ts,
graph_layout.ts, graph_expander.ts; the ONNX adapter justinchuby/model-explorer-onnx,
main.py) and re-implemented; no code was copied:

  graph      as the ONNX adapter builds it: one node per op, labelled with its op type, in
             the namespace "<graph name>/<the op name's path without its last part>"; one
             node per initializer in the graph's namespace; graph inputs and outputs as
             nodes at the root. (The adapter skips ops without a name; this script names
             them node_<index> so that scope-less exports such as paddle2onnx's are drawn.)
  layers     every namespace is a group (a "layer"), collapsed unless expanded; a group
             holding a single op is dissolved into its parent, repeatedly; a group with more
             than 1,000 children is cut into section_k_of_n groups in depth-first order.
  edges      an edge between two nodes is drawn at the level of their common namespace,
             between the children of that level holding each end: an edge into an expanded
             layer ends on the layer's border, not on the op inside it.
  layout     each expanded group's children, and the root, laid out on their own by dagre,
             top to bottom, nodesep 20, ranksep 50, edgesep 20, margins 20 (x) and 36 (y);
             an expanded group is its children's bounds plus 20 left and right, 36 above
             (its label) and 16 below; ops are 26 high and max(80, label + 24) wide, groups
             28 wider for their expand and menu icons; no edge labels.
  edges      dagre's points through a monotone cubic in y (d3.curveMonotoneY).

Fonts (DejaVu Sans 11 px, wider than the browser's) and colours are close, not equal.
--view WxH crops the picture at 100 %, the top of the graph centred on the first input
(--focus NAME: on that layer or op);
--full writes the whole drawing scaled to --full-width. Prints counts and dagre's time.
"""
import argparse
import json
import os
import subprocess
import sys

import onnx
from PIL import Image, ImageDraw, ImageFont

HERE = os.path.dirname(os.path.abspath(__file__))
FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'
BOLD = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'
SS = 2  # supersampling

SETTINGS = {'rankdir': 'TB', 'nodesep': 20, 'ranksep': 50, 'edgesep': 20,
            'marginx': 20, 'marginy': 36}
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 20, 36, 16
NODE_H, MIN_W, LABEL_PAD, GROUP_ICONS = 26, 80, 24, 28
SECTION_LIMIT = 1000


class Node:
    def __init__(self, nid, label, ns, kind):
        self.id, self.label, self.ns, self.kind = nid, label, ns, kind  # kind: op, io, init, group
        self.children = []  # groups only
        self.w = self.h = 0.0
        self.x = self.y = 0.0  # top-left, absolute, once placed


def split_ns(ns):
    return [p for p in ns.split('/') if p]


def build(model):
    """The adapter's graph: nodes with namespaces, and value edges (source id, target id)."""
    g = model.graph
    gname = g.name or 'graph'
    nodes, edges, producer = {}, [], {}
    inits = {t.name for t in g.initializer}
    for vi in g.input:
        if vi.name in inits:
            continue
        nid = '[io]' + vi.name
        nodes[nid] = Node(nid, vi.name, '', 'io')
        producer[vi.name] = nid
    for t in g.initializer:
        nid = '[initializer]' + t.name
        nodes[nid] = Node(nid, t.name, gname, 'init')
        producer[t.name] = nid
    for i, n in enumerate(g.node):
        name = n.name or f'node_{i}'
        parts = [p or '<anonymous>' for p in name.lstrip('/').split('/')[:-1]]
        ns = '/'.join([gname] + parts)
        label = n.op_type if n.domain in ('', 'ai.onnx') else f'{n.domain}::{n.op_type}'
        nid = name if name not in nodes else f'{name}#{i}'
        nodes[nid] = Node(nid, label, ns, 'op')
        for x in n.input:
            if x in producer:
                edges.append((producer[x], nid))
        for o in n.output:
            producer[o] = nid
    for vi in g.output:
        nid = '[io]out:' + vi.name
        nodes[nid] = Node(nid, vi.name, '', 'io')
        if vi.name in producer:
            edges.append((producer[vi.name], nid))
    return nodes, edges


def make_groups(nodes):
    """Groups per namespace; single-op groups dissolved; big groups cut into sections."""
    groups = {}

    def group(ns):
        if ns not in groups:
            parts = split_ns(ns)
            groups[ns] = Node(ns, parts[-1], '/'.join(parts[:-1]), 'group')
            if parts[:-1]:
                group('/'.join(parts[:-1]))
        return groups[ns]

    for n in nodes.values():
        if n.ns:
            group(n.ns)

    def relink():
        for gr in groups.values():
            gr.children = []
        roots = []
        for n in list(nodes.values()) + list(groups.values()):
            (groups[n.ns].children if n.ns else roots).append(n)
        return roots

    while True:
        relink()
        single = [gr for gr in groups.values()
                  if len(gr.children) == 1 and gr.children[0].kind != 'group']
        if not single:
            break
        for gr in single:
            gr.children[0].ns = gr.ns
            del groups[gr.id]
    roots = relink()
    return groups, roots


def lifted_edges(nodes, groups, edges):
    """Per level (group id, '' for the root): the (from, to) pairs among its children."""
    everything = {**nodes, **groups}
    levels = {}
    for s, t in edges:
        a, b = split_ns(everything[s].ns), split_ns(everything[t].ns)
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        common = '/'.join(a[:k])
        src = s if len(a) == k else '/'.join(a[:k + 1])
        dst = t if len(b) == k else '/'.join(b[:k + 1])
        if src != dst:
            levels.setdefault(common, {})[(src, dst)] = True
    return levels


def split_sections(groups, roots, levels):
    """Model Explorer cuts a level of more than 1,000 children into sections."""
    def cut(container_id, children):
        if len(children) <= SECTION_LIMIT:
            return children
        edges = levels.get(container_id, {})
        out = {}
        incoming = set()
        for s, t in edges:
            out.setdefault(s, []).append(t)
            incoming.add(t)
        ids = {c.id: c for c in children}
        order, seen = [], set()

        def visit(nid):
            stack = [nid]
            while stack:
                cur = stack.pop()
                if cur in seen or cur not in ids:
                    continue
                seen.add(cur)
                order.append(ids[cur])
                stack.extend(reversed(out.get(cur, [])))
        for c in children:
            if c.id not in incoming:
                visit(c.id)
        for c in children:
            visit(c.id)
        chunks = [order[i:i + SECTION_LIMIT] for i in range(0, len(order), SECTION_LIMIT)]
        sections = []
        for i, chunk in enumerate(chunks):
            label = f'section_{i + 1}_of_{len(chunks)}'
            sid = (container_id + '/' if container_id else '') + label
            sec = Node(sid, label, container_id, 'group')
            sec.children = chunk
            groups[sid] = sec
            sections.append(sec)
        return sections

    roots[:] = cut('', roots)
    for gid in list(groups):
        gr = groups[gid]
        gr.children = cut(gid, gr.children)


class Metrics:
    def __init__(self):
        self.font = ImageFont.truetype(FONT, 11 * SS)
        self.bold = ImageFont.truetype(BOLD, 11 * SS)

    def width(self, text, bold=False):
        return (self.bold if bold else self.font).getlength(text) / SS


def run_dagre(payload):
    script = os.path.join(HERE, 'dagre_layout.mjs')
    if not os.path.isdir(os.path.join(HERE, 'node_modules', '@dagrejs', 'dagre')):
        sys.exit('model_explorer_render.py: bench/gui/node_modules is missing: '
                 'run bench/gui/install.sh')
    out = subprocess.run(['node', script], input=json.dumps(payload).encode(),
                         capture_output=True, check=True)
    return json.loads(out.stdout)


class Layout:
    def __init__(self, groups, roots, levels, expanded, m):
        self.groups, self.roots, self.levels, self.expanded, self.m = (
            groups, roots, levels, expanded, m)
        self.local = {}  # level id -> (positions {id: (x, y) top-left local}, edges, offset)
        self.ms = 0.0

    def size(self, n):
        if n.kind == 'group' and n.id in self.expanded:
            return self.lay_out(n.id, n.children, n)
        w = max(MIN_W, self.m.width(n.label, n.kind == 'group') + LABEL_PAD +
                (GROUP_ICONS if n.kind == 'group' else 0))
        n.w, n.h = w, NODE_H
        return w, NODE_H

    def lay_out(self, level_id, children, owner):
        for c in children:
            self.size(c)
        ids = {c.id for c in children}
        edges = [(s, t) for (s, t) in self.levels.get(level_id, {}) if s in ids and t in ids]
        laid = run_dagre({'nodes': [{'id': c.id, 'width': c.w, 'height': c.h} for c in children],
                          'edges': [{'v': s, 'w': t} for s, t in edges], 'graph': SETTINGS})
        self.ms += laid['ms']
        pos = {n['id']: n for n in laid['nodes']}
        xs = [pos[c.id]['x'] - c.w / 2 for c in children]
        ys = [pos[c.id]['y'] - c.h / 2 for c in children]
        xe = [pos[c.id]['x'] + c.w / 2 for c in children]
        ye = [pos[c.id]['y'] + c.h / 2 for c in children]
        for e in laid['edges']:
            for p in e['points']:
                xs.append(p['x'])
                xe.append(p['x'])
        min_x, min_y = min(xs), min(ys)
        width, height = max(xe) - min_x, max(ye) - min_y
        full = width + 2 * MARGIN_X
        shift = 0.0
        if owner is not None:
            collapsed = max(MIN_W, self.m.width(owner.label, True) + LABEL_PAD + GROUP_ICONS)
            if full < collapsed:
                shift, full = (collapsed - full) / 2, collapsed
            owner.w, owner.h = full, height + MARGIN_TOP + MARGIN_BOTTOM
        # Children relative to the level's top-left corner, edges likewise.
        dx, dy = MARGIN_X - min_x + shift, (MARGIN_TOP if owner is not None else 0) - min_y
        local = {c.id: (pos[c.id]['x'] - c.w / 2 + dx, pos[c.id]['y'] - c.h / 2 + dy)
                 for c in children}
        paths = [[(p['x'] + dx, p['y'] + dy) for p in e['points']] for e in laid['edges']]
        self.local[level_id] = (local, paths)
        return (owner.w, owner.h) if owner is not None else (full, height)

    def place(self, level_id, children, ox, oy, out_nodes, out_edges, depth=0):
        local, paths = self.local[level_id]
        for c in children:
            c.x, c.y = ox + local[c.id][0], oy + local[c.id][1]
            open_ = c.kind == 'group' and c.id in self.expanded
            out_nodes.append((c, open_, depth))
            if open_:
                self.place(c.id, c.children, c.x, c.y, out_nodes, out_edges, depth + 1)
        for p in paths:
            out_edges.append([(x + ox, y + oy) for x, y in p])


def monotone_y(points, samples=10):
    """d3.curveMonotoneY: a cubic Hermite curve with x a function of y (Fritsch-Carlson)."""
    if len(points) < 3:
        return points
    ys = [p[1] for p in points]
    xs = [p[0] for p in points]
    n = len(points)

    def sign(v):
        return (v > 0) - (v < 0)
    h = [ys[i + 1] - ys[i] for i in range(n - 1)]
    if any(abs(v) < 1e-9 for v in h):
        return points
    s = [(xs[i + 1] - xs[i]) / h[i] for i in range(n - 1)]
    t = [0.0] * n
    for i in range(1, n - 1):
        p = (s[i - 1] * h[i] + s[i] * h[i - 1]) / (h[i - 1] + h[i])
        t[i] = (sign(s[i - 1]) + sign(s[i])) * min(abs(s[i - 1]), abs(s[i]), 0.5 * abs(p))
    t[0] = (3 * s[0] - t[1]) / 2
    t[-1] = (3 * s[-1] - t[-2]) / 2
    out = [points[0]]
    for i in range(n - 1):
        y0, y1, x0, x1 = ys[i], ys[i + 1], xs[i], xs[i + 1]
        d = (y1 - y0) / 3
        c1, c2 = (x0 + d * t[i], y0 + d), (x1 - d * t[i + 1], y1 - d)
        for k in range(1, samples + 1):
            u = k / samples
            a, b, c, e = (1 - u) ** 3, 3 * (1 - u) ** 2 * u, 3 * (1 - u) * u * u, u ** 3
            out.append((a * x0 + b * c1[0] + c * c2[0] + e * x1,
                        a * y0 + b * c1[1] + c * c2[1] + e * y1))
    return out


GROUP_FILL = [(232, 240, 254), (214, 228, 252), (196, 215, 249), (178, 202, 246)]


def render(placed, edges, width, height, m, margin=20):
    W, H = int((width + 2 * margin) * SS), int((height + 2 * margin) * SS)
    img = Image.new('RGB', (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)

    def P(x, y):
        return ((x + margin) * SS, (y + margin) * SS)
    for n, open_, depth in placed:  # expanded layers first, under everything
        if not open_:
            continue
        x0, y0 = P(n.x, n.y)
        x1, y1 = P(n.x + n.w, n.y + n.h)
        d.rounded_rectangle([x0, y0, x1, y1], radius=6 * SS,
                            fill=GROUP_FILL[min(depth, len(GROUP_FILL) - 1)],
                            outline=(120, 140, 180), width=SS)
        d.text((x0 + 8 * SS, y0 + 6 * SS), '−', font=m.bold, fill=(60, 60, 60))
        tw = m.bold.getlength(n.label)
        d.text(((x0 + x1) / 2 - tw / 2, y0 + 6 * SS), n.label, font=m.bold, fill=(30, 30, 30))
    for pts in edges:
        curve = [P(*q) for q in monotone_y(pts)]
        d.line(curve, fill=(150, 150, 150), width=SS)
        (xa, ya), (xb, yb) = curve[-2], curve[-1]
        import math
        a = math.atan2(yb - ya, xb - xa)
        L = 7 * SS
        d.polygon([(xb, yb), (xb - L * math.cos(a - 0.4), yb - L * math.sin(a - 0.4)),
                   (xb - L * math.cos(a + 0.4), yb - L * math.sin(a + 0.4))], fill=(150, 150, 150))
    for n, open_, depth in placed:
        if open_:
            continue
        x0, y0 = P(n.x, n.y)
        x1, y1 = P(n.x + n.w, n.y + n.h)
        if n.kind == 'group':
            fill, outline, font = GROUP_FILL[min(depth + 1, len(GROUP_FILL) - 1)], (90, 110, 160), m.bold
        elif n.kind == 'io':
            fill, outline, font = (238, 238, 238), (119, 119, 119), m.font
        elif n.kind == 'init':
            fill, outline, font = (250, 250, 240), (170, 170, 150), m.font
        else:
            fill, outline, font = (255, 255, 255), (119, 119, 119), m.font
        d.rounded_rectangle([x0, y0, x1, y1], radius=6 * SS, fill=fill, outline=outline, width=SS)
        if n.kind == 'group':
            d.text((x0 + 8 * SS, y0 + 6 * SS), '+', font=m.bold, fill=(60, 60, 60))
        tw = font.getlength(n.label)
        d.text(((x0 + x1) / 2 - tw / 2, y0 + 6 * SS), n.label, font=font, fill=(30, 30, 30))
    return img.resize((W // SS, H // SS), Image.LANCZOS), margin


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('model')
    ap.add_argument('--out', required=True, help='PNG of the view at 100 %')
    ap.add_argument('--expand', action='append', default=[],
                    help='expand the layers whose label or path is NAME (and their ancestors)')
    ap.add_argument('--expand-all', action='store_true', help="Model Explorer's 'expand all'")
    ap.add_argument('--view', default='1234x889', help='viewport WxH (default 1234x889)')
    ap.add_argument('--focus', help='centre the view on the layer or op labelled FOCUS '
                    '(its top 40 px below the top of the view) instead of the first input')
    ap.add_argument('--full', help='also write the whole drawing, scaled to --full-width')
    ap.add_argument('--full-width', type=int, default=400)
    args = ap.parse_args()
    try:
        model = onnx.load(args.model, load_external_data=False)
    except Exception as e:  # a clear error naming the file
        sys.exit(f'model_explorer_render.py: cannot read {args.model}: {e}')
    nodes, edges = build(model)
    groups, roots = make_groups(nodes)
    levels = lifted_edges(nodes, groups, edges)
    split_sections(groups, roots, levels)
    if any(gr.id.split('/')[-1].startswith('section_') for gr in groups.values()):
        for gr in groups.values():  # the sections' members moved: recompute the namespaces
            for c in gr.children:
                c.ns = gr.id
        for r in roots:
            r.ns = ''
        levels = lifted_edges(nodes, groups, edges)
    expanded = set()
    if args.expand_all:
        expanded = set(groups)
    for name in args.expand:
        hits = [gid for gid, gr in groups.items() if gr.label == name or gid.endswith(name)]
        if not hits:
            sys.exit(f'model_explorer_render.py: no layer named {name} in {args.model}')
        for gid in hits:
            parts = split_ns(gid)
            for k in range(1, len(parts) + 1):
                expanded.add('/'.join(parts[:k]))
    m = Metrics()
    lay = Layout(groups, roots, levels, expanded, m)
    width, height = lay.lay_out('', roots, None)
    placed, drawn_edges = [], []
    lay.place('', roots, 0, 0, placed, drawn_edges)
    img, margin = render(placed, drawn_edges, width, height, m)
    vw, vh = (int(v) for v in args.view.split('x'))
    first = next((n for n, _, _ in placed if n.kind == 'io'), placed[0][0])
    top = 0
    if args.focus:
        first = next((n for n, _, _ in placed if n.label == args.focus), None)
        if first is None:
            sys.exit(f'model_explorer_render.py: nothing labelled {args.focus} is shown')
        top = max(0, int(first.y + margin - 40))
    left = int(first.x + first.w / 2 + margin - vw / 2)
    view = Image.new('RGB', (vw, vh), (255, 255, 255))
    src = (max(left, 0), top, min(left + vw, img.width), min(top + vh, img.height))
    view.paste(img.crop(src), (src[0] - left, 0))
    view.save(args.out)
    if args.full:
        scale = args.full_width / img.width
        img.resize((args.full_width, max(1, int(img.height * scale))), Image.LANCZOS).save(args.full)
    shown = [n for n, open_, _ in placed if not open_]
    print(json.dumps({'model': os.path.basename(args.model), 'nodes': len(nodes),
                      'layers': len(groups), 'expanded': len(expanded), 'boxes': len(shown),
                      'edges': len(drawn_edges), 'width': round(width), 'height': round(height),
                      'dagre_ms': round(lay.ms, 1)}))


if __name__ == '__main__':
    main()
