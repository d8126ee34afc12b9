#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Draws an ONNX model's graph with the dagre layout, the way Netron draws it, as a PNG.

  bench/gui/install.sh                 # once: npm install of @dagrejs/dagre
  dagre_render.py MODEL.onnx --out dagre.png [--view 1216x900] [--full full.png]

What is drawn follows Netron's ONNX view (its grapher and view code, read, not run): the
graph flat, one box per node with the op type as its header (coloured by category) and a
list of the node's initializer inputs under it (`W ⟨64×3×7×7⟩`, the schema's input
name); Constant nodes as boxes; graph inputs and outputs as boxes; edges labelled with
the tensor shape where the file declares it (value_info), dropped above 16 characters;
dagre with nodesep 20, ranksep 20, top to bottom, labels on the right of their edge,
minlen 2 below nodes that only read initializers. It is NOT Netron: no attributes, names
or hover; fonts and paddings are close, not equal. The layout is @dagrejs/dagre (the
library Netron's own dagre.js was ported from), run by dagre_layout.mjs under node.

--view WxH crops the picture the way a viewer opens a graph: at 100 %, the top of the
graph, centred on the first input. --full writes the whole graph scaled to --full-width.
Prints the node and edge counts, the drawing's size and dagre's time as JSON.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import onnx
from onnx import defs
from PIL import Image, ImageDraw, ImageFont

HERE = os.path.dirname(os.path.abspath(__file__))
FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'
BOLD = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'
SS = 2  # supersampling: drawn at 2x, then scaled down

# Netron's node header colours by category (grapher.css); ops without a category: black.
CATEGORY_FILL = {
    'layer': (51, 85, 136), 'activation': (112, 41, 33), 'pool': (51, 85, 51),
    'normalization': (51, 85, 68), 'dropout': (69, 71, 112), 'shape': (108, 79, 71),
    'tensor': (89, 66, 59), 'transform': (51, 85, 68), 'data': (85, 85, 85),
    'quantization': (80, 40, 0), 'constant': (238, 238, 238),
}
# The categories of the ops these models use, as Netron's ONNX metadata gives them.
OP_CATEGORY = {
    'Conv': 'layer', 'ConvTranspose': 'layer', 'Gemm': 'layer', 'LSTM': 'layer', 'GRU': 'layer',
    'Relu': 'activation', 'Sigmoid': 'activation', 'Tanh': 'activation', 'Softmax': 'activation',
    'LeakyRelu': 'activation', 'Clip': 'activation', 'HardSigmoid': 'activation',
    'HardSwish': 'activation', 'Elu': 'activation', 'Selu': 'activation', 'PRelu': 'activation',
    'LogSoftmax': 'activation', 'Gelu': 'activation',
    'MaxPool': 'pool', 'AveragePool': 'pool', 'GlobalAveragePool': 'pool',
    'GlobalMaxPool': 'pool',
    'BatchNormalization': 'normalization', 'LayerNormalization': 'normalization',
    'InstanceNormalization': 'normalization', 'LRN': 'normalization',
    'Dropout': 'dropout',
    'Reshape': 'shape', 'Flatten': 'shape', 'Squeeze': 'shape', 'Unsqueeze': 'shape',
    'Concat': 'tensor', 'Split': 'tensor', 'Gather': 'transform', 'Slice': 'tensor',
    'Pad': 'tensor', 'Tile': 'tensor', 'Expand': 'tensor',
    'Transpose': 'transform', 'Cast': 'transform',
    'Constant': 'constant',
}


def dims_text(dims):
    return '×'.join(str(d) for d in dims)


def value_dims(vi):
    t = vi.type.tensor_type
    if not t.HasField('shape'):
        return None
    out = []
    for d in t.shape.dim:
        out.append(d.dim_value if d.HasField('dim_value') else (d.dim_param or '?'))
    return out


def build_graph(model):
    g = model.graph
    opset = {o.domain: o.version for o in model.opset_import}
    inits = {t.name: list(t.dims) for t in g.initializer}
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        d = value_dims(vi)
        if d:
            shapes[vi.name] = d
    nodes, edges, producer = [], [], {}
    for vi in g.input:
        if vi.name in inits:
            continue
        nid = f'in:{vi.name}'
        nodes.append({'id': nid, 'header': vi.name, 'kind': 'input', 'args': []})
        producer[vi.name] = nid
    for i, n in enumerate(g.node):
        nid = f'n{i}'
        try:
            schema = defs.get_schema(n.op_type, opset.get(n.domain, 1), n.domain)
            names = [p.name for p in schema.inputs]
        except Exception:  # custom domains: positional names
            names = []
        args = []
        for k, name in enumerate(n.input):
            if name in inits:
                label = names[min(k, len(names) - 1)] if names else f'input{k}'
                args.append((label, f'⟨{dims_text(inits[name])}⟩'))
        only_inits = all(x in inits or not x for x in n.input)
        nodes.append({'id': nid, 'header': n.op_type, 'kind': OP_CATEGORY.get(n.op_type, ''),
                      'args': args, 'only_inits': only_inits})
        for o in n.output:
            producer[o] = nid
    node_of = {nd['id']: nd for nd in nodes}
    for i, n in enumerate(g.node):
        for name in n.input:
            if name in producer:
                edges.append({'v': producer[name], 'w': f'n{i}', 'value': name})
    for vi in g.output:
        nid = f'out:{vi.name}'
        nodes.append({'id': nid, 'header': vi.name, 'kind': 'output', 'args': []})
        node_of[nid] = nodes[-1]
        if vi.name in producer:
            edges.append({'v': producer[vi.name], 'w': nid, 'value': vi.name})
    for e in edges:
        d = shapes.get(e['value'])
        text = dims_text(d) if d else ''
        e['label'] = text if len(text) <= 16 else ''
        e['minlen'] = 2 if node_of[e['v']].get('only_inits') else 1
    return nodes, edges


class Metrics:
    def __init__(self):
        self.head = ImageFont.truetype(FONT, 11 * SS)
        self.arg = ImageFont.truetype(FONT, 10 * SS)
        self.arg_bold = ImageFont.truetype(BOLD, 10 * SS)
        self.edge = ImageFont.truetype(FONT, 9 * SS)

    @staticmethod
    def width(font, text):
        return font.getlength(text) / SS


def measure(nodes, edges, m):
    for nd in nodes:
        head_w = m.width(m.head, nd['header']) + 14  # 7 px either side
        head_h = 11 * 1.25 + 8                         # text box and 4 px above and below
        w, h = head_w, head_h
        if nd['args']:
            w = max(w, 75)  # the argument list's minimum width
            h += 3
            for name, val in nd['args']:
                w = max(w, m.width(m.arg_bold, name) + m.width(m.arg, ' ' + val) + 12)
                h += 10 * 1.25 + 3
        nd['width'], nd['height'], nd['head_h'] = w, h, head_h
    for e in edges:
        e['width'] = m.width(m.edge, e['label']) + 2 if e['label'] else 0
        e['height'] = 9 * 1.25 if e['label'] else 0


def run_dagre(nodes, edges):
    script = os.path.join(HERE, 'dagre_layout.mjs')
    if not os.path.isdir(os.path.join(HERE, 'node_modules', '@dagrejs', 'dagre')):
        sys.exit('dagre_render.py: bench/gui/node_modules is missing: run bench/gui/install.sh')
    payload = {
        'nodes': [{'id': n['id'], 'width': n['width'], 'height': n['height']} for n in nodes],
        'edges': [{'v': e['v'], 'w': e['w'], 'width': e['width'], 'height': e['height'],
                   'minlen': e['minlen']} for e in edges],
    }
    out = subprocess.run(['node', script], input=json.dumps(payload).encode(),
                         capture_output=True, check=True)
    return json.loads(out.stdout)


def basis_curve(points, samples=8):
    """d3.curveBasis through the points (what Netron strokes its edges with)."""
    if len(points) < 3:
        return points
    p = [points[0]] + points + [points[-1]]
    out = [points[0]]
    for i in range(len(p) - 3):
        p0, p1, p2, p3 = p[i], p[i + 1], p[i + 2], p[i + 3]
        for s in range(1, samples + 1):
            t = s / samples
            b0 = (1 - t) ** 3 / 6
            b1 = (3 * t ** 3 - 6 * t ** 2 + 4) / 6
            b2 = (-3 * t ** 3 + 3 * t ** 2 + 3 * t + 1) / 6
            b3 = t ** 3 / 6
            out.append((b0 * p0[0] + b1 * p1[0] + b2 * p2[0] + b3 * p3[0],
                        b0 * p0[1] + b1 * p1[1] + b2 * p2[1] + b3 * p3[1]))
    out.append(points[-1])
    return out


def render(nodes, edges, laid, m, margin=20):
    pos = {n['id']: n for n in laid['nodes']}
    W = int((laid['width'] + 2 * margin) * SS)
    H = int((laid['height'] + 2 * margin) * SS)
    img = Image.new('RGB', (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)

    def P(x, y):
        return ((x + margin) * SS, (y + margin) * SS)

    for e, le in zip(edges, laid['edges']):
        pts = [(q['x'], q['y']) for q in le['points']]
        curve = [P(*q) for q in basis_curve(pts)]
        d.line(curve, fill=(51, 51, 51), width=SS)
        (x1, y1), (x2, y2) = curve[-2], curve[-1]
        a = math.atan2(y2 - y1, x2 - x1)
        L = 7 * SS
        d.polygon([(x2, y2), (x2 - L * math.cos(a - 0.4), y2 - L * math.sin(a - 0.4)),
                   (x2 - L * math.cos(a + 0.4), y2 - L * math.sin(a + 0.4))], fill=(51, 51, 51))
        if e['label'] and 'x' in le:
            x, y = P(le['x'] - e['width'] / 2, le['y'] - e['height'] / 2)
            d.text((x, y), e['label'], font=m.edge, fill=(34, 34, 34))
    for nd in nodes:
        p = pos[nd['id']]
        x0, y0 = P(p['x'] - nd['width'] / 2, p['y'] - nd['height'] / 2)
        x1, y1 = P(p['x'] + nd['width'] / 2, p['y'] + nd['height'] / 2)
        kind = nd['kind']
        if kind in ('input', 'output'):
            fill, text = (240, 240, 240), (0, 0, 0)
        elif kind == 'constant':
            fill, text = CATEGORY_FILL['constant'], (0, 0, 0)
        else:
            fill, text = CATEGORY_FILL.get(kind, (0, 0, 0)), (255, 255, 255)
        hy = y0 + nd['head_h'] * SS
        d.rounded_rectangle([x0, y0, x1, y1], radius=5 * SS, fill=(242, 242, 242),
                            outline=(51, 51, 51), width=SS)
        d.rounded_rectangle([x0, y0, x1, hy if nd['args'] else y1], radius=5 * SS, fill=fill,
                            outline=(51, 51, 51), width=SS)
        if nd['args']:  # square the header's lower corners over the list
            d.rectangle([x0 + SS, hy - 5 * SS, x1 - SS, hy - SS], fill=fill)
            d.line([(x0, hy), (x1, hy)], fill=(51, 51, 51), width=SS)
        d.text((x0 + 7 * SS, y0 + 4 * SS), nd['header'], font=m.head, fill=text)
        y = hy + 3 * SS
        for name, val in nd['args']:
            d.text((x0 + 6 * SS, y), name, font=m.arg_bold, fill=(34, 34, 34))
            d.text((x0 + 6 * SS + m.arg_bold.getlength(name), y), ' ' + val, font=m.arg,
                   fill=(34, 34, 34))
            y += (10 * 1.25 + 3) * SS
    return img.resize((W // SS, H // SS), Image.LANCZOS), margin


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('model')
    ap.add_argument('--out', required=True, help='PNG of the view at 100 %')
    ap.add_argument('--view', default='1216x900', help='viewport WxH (default 1216x900)')
    ap.add_argument('--full', help='also write the whole graph, scaled to --full-width')
    ap.add_argument('--full-width', type=int, default=400)
    args = ap.parse_args()
    try:
        model = onnx.load(args.model, load_external_data=False)
    except Exception as e:  # a clear error naming the file
        sys.exit(f'dagre_render.py: cannot read {args.model}: {e}')
    m = Metrics()
    nodes, edges = build_graph(model)
    measure(nodes, edges, m)
    laid = run_dagre(nodes, edges)
    img, margin = render(nodes, edges, laid, m)
    vw, vh = (int(v) for v in args.view.split('x'))
    first = next((n for n in laid['nodes'] if n['id'].startswith('in:')), laid['nodes'][0])
    left = int(first['x'] + margin - vw / 2)
    view = Image.new('RGB', (vw, vh), (255, 255, 255))
    src = (max(left, 0), 0, min(left + vw, img.width), min(vh, img.height))
    view.paste(img.crop(src), (src[0] - left, 0))
    view.save(args.out)
    if args.full:
        scale = args.full_width / img.width
        img.resize((args.full_width, max(1, int(img.height * scale))), Image.LANCZOS).save(args.full)
    print(json.dumps({'model': os.path.basename(args.model), 'nodes': len(nodes),
                      'edges': len(edges), 'width': round(laid['width']),
                      'height': round(laid['height']), 'dagre_ms': round(laid['ms'], 1)}))


if __name__ == '__main__':
    main()
