# SPDX-License-Identifier: Apache-2.0
"""The corpus's PyTorch models: what to build, with which example inputs and export settings.

MODELS maps a name to a spec, read by build_corpus.py:
  family, task      what the table in docs/corpus.md shows
  make()            -> dict(model, inputs (tuple), input_names, output_names[, calib])
  source            where the network comes from (torchvision or torch.nn written here)
  dynamic, dims     torch.onnx dynamic_axes, and the value each symbolic dim is bound to
  int_max, values   the range of integer inputs ([0, int_max)), per-input overrides
  opset, keep_bn, constant_folding, initializers_as_inputs, post   export settings
  fresh_norms       keep normalization layers as initialized (untrained)
  base              a variant: the spec of `base` with these settings on top
  cost              relative build time (big exports start first)
Sizes are kept so that each model runs in about a second or less in ONNX Runtime on two
cores: images 224x224 (299 for Inception, 320 for detection and mobile segmentation), video
clips of 8 frames at 112x112, sequences of 128 tokens.
"""

import math
import os

import onnx
import torch
import torch.nn as nn
import torchvision
from torchvision.models import detection, optical_flow, segmentation, video
from torchvision.ops.misc import FrozenBatchNorm2d

# Opset 14 as in bench/export_models.py: LayerNorm and GELU export decomposed, the form most
# deployed exports have. Variants cover 11, 13 and 17 (LayerNormalization as one op).
OPSET = 14
TV = f"torchvision {torchvision.__version__.split('+')[0]}"


# ----------------------------------------------------------------- realistic parameters
def prepare(model, inputs, calib=None, fresh=False):
    """Gives normalization layers trained-looking parameters, then puts the model in eval mode.

    Fresh layers have gamma=1, beta=0, mean=0, var=1: Conv+BN folding would be a no-op (and
    the exporter would share the identical tensors behind Identity nodes, which no trained
    model does). Random affine parameters plus statistics measured on a random batch keep deep
    networks' activations in range, like bench/export_models.py does. FrozenBatchNorm2d
    (detection backbones) is calibrated by a pre-hook that sets its statistics from its input.
    Layers that start at zero (ViT's head) are re-initialized so outputs are not all zero, and
    other constant-valued parameters get noise. With `fresh`, normalization layers keep their
    initial values (an untrained model).
    """
    for m in model.modules():
        w = getattr(m, "weight", None)
        if isinstance(m, (nn.Linear, nn.Conv2d)) and w is not None and not w.any():
            with torch.no_grad():
                w.normal_(0.0, 0.02)
                if m.bias is not None:
                    m.bias.normal_(0.0, 0.02)
        if fresh:
            continue
        if isinstance(m, (nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._BatchNorm)) \
                and getattr(m, "weight", None) is not None:
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    if not fresh:
        # Parameters whose elements are all equal (zero biases, ConvNeXt's 1e-6 layer scale)
        # would be shared behind Identity nodes: no trained model has them.
        with torch.no_grad():
            for p in model.parameters():
                if p.numel() > 1 and bool((p == p.flatten()[0]).all()):
                    if p.flatten()[0] == 0:
                        p.normal_(0.0, 0.02)
                    else:
                        p.mul_(torch.empty_like(p).uniform_(0.5, 1.5))
            # Copies of one tensor (nn.TransformerEncoder deep-copies its first layer) would
            # be shared too.
            seen = {}
            for p in model.parameters():
                key = (tuple(p.shape), float(p.sum()))
                if any(torch.equal(p, q) for q in seen.get(key, [])):
                    p.add_(torch.randn_like(p) * (0.1 * float(p.std()) + 1e-3))
                seen.setdefault(key, []).append(p)
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    frozen = [m for m in model.modules() if isinstance(m, FrozenBatchNorm2d)]
    if (bns or frozen) and not fresh:
        target, example = calib if calib else (model, inputs)
        batch = tuple(torch.cat([x, torch.randn_like(x)]) if torch.is_tensor(x) and
                      x.is_floating_point() else x for x in example)
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batch
        hooks = [m.register_forward_pre_hook(_calibrate_frozen) for m in frozen]
        target.train()
        with torch.no_grad():
            target(*batch)
        for h in hooks:
            h.remove()
    model.eval()


def _calibrate_frozen(m, args):
    x = args[0]
    with torch.no_grad():
        m.running_mean.copy_(x.mean(dim=(0, 2, 3)))
        m.running_var.copy_(x.var(dim=(0, 2, 3)))
        m.weight.uniform_(0.5, 1.5)
        m.bias.normal_(0.0, 0.1)


# ----------------------------------------------------------------- torchvision wrappers
class Outputs(nn.Module):
    """Returns a dict- or list-returning model's outputs as a tuple (ONNX outputs)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        out = self.m(x)
        return tuple(out.values()) if isinstance(out, dict) else out


def image(ctor, size=224, c=3, names=("input",), out=("output",), wrap=False, **kw):
    def make():
        m = ctor(weights=None, **kw)
        return dict(model=Outputs(m) if wrap else m, inputs=(torch.randn(1, c, size, size),),
                    input_names=list(names), output_names=list(out))
    return make


def clip(ctor, frames=8, size=112):
    def make():
        return dict(model=ctor(weights=None), inputs=(torch.randn(1, 3, frames, size, size),),
                    input_names=["clip"], output_names=["output"])
    return make


def fpn_resnet50():
    m = detection.backbone_utils.resnet_fpn_backbone(backbone_name="resnet50", weights=None,
                                                     trainable_layers=5)
    return dict(model=Outputs(m), inputs=(torch.randn(1, 3, 320, 320),), input_names=["input"],
                output_names=["p2", "p3", "p4", "p5", "pool"])


def ssdlite_backbone():
    full = detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    return dict(model=Outputs(full.backbone), inputs=(torch.randn(1, 3, 320, 320),),
                input_names=["input"], output_names=[f"f{i}" for i in range(6)])


def full_detector(ctor):
    def make():
        m = ctor(weights=None, weights_backbone=None)
        # The detector takes a list of CHW images; calibrate BN on its backbone alone.
        return dict(model=m, inputs=([torch.rand(3, 320, 320)],), input_names=["image"],
                    output_names=["boxes", "scores", "labels"],
                    calib=(m.backbone, (torch.randn(1, 3, 320, 320),)))
    return make


def raft_small():
    m = optical_flow.raft_small(weights=None)
    return dict(model=m, inputs=(torch.randn(1, 3, 128, 128), torch.randn(1, 3, 128, 128)),
                input_names=["image1", "image2"], output_names=[f"flow{i}" for i in range(12)])


# ----------------------------------------------------------------- BERT-like encoder
class BertLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
        self.ffn_in, self.ffn_out = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.act = nn.GELU()

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.hd).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        b, t, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd) + ext_mask
        ctx = torch.matmul(torch.softmax(s, dim=-1), v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ffn_out(self.act(self.ffn_in(x))))


class BertLike(nn.Module):
    """BERT as HF transformers writes it: post-LN, erf GELU, additive mask from an int mask."""

    def __init__(self, layers, d, heads, vocab=30522, max_pos=512):
        super().__init__()
        self.word, self.pos, self.tok_type = (nn.Embedding(vocab, d), nn.Embedding(max_pos, d),
                                              nn.Embedding(2, d))
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(d, heads, 4 * d) for _ in range(layers)])
        self.pooler = nn.Linear(d, d)

    def forward(self, input_ids, attention_mask):
        t = input_ids.shape[1]
        pos = torch.arange(t, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) +
                    self.tok_type(torch.zeros_like(input_ids)))
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        return x, torch.tanh(self.pooler(x[:, 0]))


def bert(layers, d, heads, static=False):
    def make():
        # Traced at batch 2 / length 16 so that no dim is mistaken for a constant 1; a static
        # export is traced at the shape it keeps.
        b, t = (1, 128) if static else (2, 16)
        ids = torch.randint(0, 30522, (b, t))
        mask = torch.ones(b, t, dtype=torch.long)
        mask[-1, t - 4:] = 0
        return dict(model=BertLike(layers, d, heads), inputs=(ids, mask),
                    input_names=["input_ids", "attention_mask"],
                    output_names=["last_hidden_state", "pooler_output"])
    return make


SEQ_AXES = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": {0: "batch"}}
MASK_VALUES = {"attention_mask": {"range": [1, 2],
                                  "notes": "1 = attend; all ones unless padding is wanted"}}


# ----------------------------------------------------------------- GPT-like decoder
class GptAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.d, self.heads, self.hd = d, heads, d // heads
        self.c_attn = nn.Linear(d, 3 * d)  # fused QKV projection, as in GPT-2
        self.c_proj = nn.Linear(d, d)

    def forward(self, x, past_k=None, past_v=None):
        b, t, _ = x.shape
        q, k, v = self.c_attn(x).split(self.d, dim=2)
        q = q.view(b, t, self.heads, self.hd).transpose(1, 2)
        k = k.view(b, t, self.heads, self.hd).transpose(1, 2)
        v = v.view(b, t, self.heads, self.hd).transpose(1, 2)
        if past_k is not None:
            k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        # Causal mask from positions: query i (after `past` earlier tokens) sees keys <= i.
        n = k.shape[2]
        kpos = torch.arange(n, device=x.device)
        qpos = kpos[n - t:] if past_k is not None else kpos
        causal = kpos.unsqueeze(0) <= qpos.unsqueeze(1)
        w = torch.where(causal, w, torch.tensor(-1e4, dtype=w.dtype))
        o = torch.matmul(torch.softmax(w, dim=-1), v).transpose(1, 2).reshape(b, t, self.d)
        return self.c_proj(o), k, v


def gelu_new(x):
    """GPT-2's tanh GELU, written out as HF transformers does."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


class GptBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = GptAttention(d, heads)
        self.mlp_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, past_k=None, past_v=None):
        a, k, v = self.attn(self.ln_1(x), past_k, past_v)
        x = x + a
        return x + self.mlp_proj(gelu_new(self.mlp_fc(self.ln_2(x)))), k, v


class GptLike(nn.Module):
    """GPT-2 layout (pre-LN, tanh GELU, tied LM head); with `past`, takes and returns the
    per-layer key/value cache as HF's ONNX exports do (past_key_values.N.key/value)."""

    def __init__(self, layers, d, heads, vocab, past=False, max_pos=1024):
        super().__init__()
        self.past = past
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(max_pos, d)
        self.h = nn.ModuleList([GptBlock(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, input_ids, *past):
        t = input_ids.shape[1]
        start = past[0].shape[2] if past else 0
        pos = torch.arange(t, dtype=torch.long, device=input_ids.device) + start
        x = self.wte(input_ids) + self.wpe(pos.unsqueeze(0))
        present = []
        for i, block in enumerate(self.h):
            x, k, v = block(x, *(past[2 * i:2 * i + 2] if past else ()))
            present += [k, v]
        logits = torch.matmul(self.ln_f(x), self.wte.weight.t())
        return (logits, *present) if self.past else logits


def gpt(layers, d, heads, vocab, past=False):
    def make():
        ids = torch.randint(0, vocab, (2, 8 if not past else 3))
        inputs, names, outs = (ids,), ["input_ids"], ["logits"]
        if past:
            for i in range(layers):
                inputs += (torch.randn(2, heads, 5, d // heads),) * 2
                names += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
                outs += [f"present.{i}.key", f"present.{i}.value"]
        return dict(model=GptLike(layers, d, heads, vocab, past), inputs=inputs,
                    input_names=names, output_names=outs)
    return make


def gpt_axes(layers, past=False):
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    if past:
        for i in range(layers):
            for kv in ("key", "value"):
                axes[f"past_key_values.{i}.{kv}"] = {0: "batch", 2: "past_seq"}
                axes[f"present.{i}.{kv}"] = {0: "batch", 2: "total_seq"}
    return axes


# ----------------------------------------------------------------- torch.nn built-ins
class NnEncoder(nn.Module):
    """nn.TransformerEncoder (pre-LN) over embeddings, with a key padding mask."""

    def __init__(self, d=256, heads=4, layers=4):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x, padding_mask):
        return self.enc(x, src_key_padding_mask=padding_mask)


def nn_encoder():
    mask = torch.zeros(2, 16, dtype=torch.bool)
    return dict(model=NnEncoder(), inputs=(torch.randn(2, 16, 256), mask),
                input_names=["embeddings", "padding_mask"], output_names=["output"])


class Seq2Seq(nn.Module):
    """nn.Transformer encoder-decoder with token embeddings, a causal target mask built
    from the target length, and an output projection (a small translation model)."""

    def __init__(self, vocab=8000, d=256, heads=4, layers=3):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, d), nn.Embedding(vocab, d)
        self.t = nn.Transformer(d, heads, layers, layers, 4 * d, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, src_ids, tgt_ids):
        n = tgt_ids.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf"), device=tgt_ids.device), diagonal=1)
        y = self.t(self.src_emb(src_ids), self.tgt_emb(tgt_ids), tgt_mask=mask)
        return self.out(y)


def seq2seq():
    return dict(model=Seq2Seq(), inputs=(torch.randint(0, 8000, (1, 12)),
                                         torch.randint(0, 8000, (1, 7))),
                input_names=["src_ids", "tgt_ids"], output_names=["logits"])


class Recurrent(nn.Module):
    """An acoustic-model-like RNN: features -> RNN -> per-frame classifier, with state."""

    def __init__(self, cell, layers, bidirectional=False, feat=80, hidden=256, classes=32):
        super().__init__()
        self.rnn = getattr(nn, cell)(feat, hidden, layers, bidirectional=bidirectional)
        self.fc = nn.Linear(hidden * (2 if bidirectional else 1), classes)

    def forward(self, x, *state):
        y, state = self.rnn(x, state if len(state) > 1 else (state[0] if state else None))
        state = state if isinstance(state, tuple) else (state,)
        return (self.fc(y), *state)


def rnn(cell, layers, bidirectional=False):
    def make():
        m = Recurrent(cell, layers, bidirectional)
        dirs = 2 if bidirectional else 1
        h = torch.zeros(layers * dirs, 1, 256)
        state = (h, h.clone()) if cell == "LSTM" else (h,)
        names = ["h0", "c0"][:len(state)]
        return dict(model=m, inputs=(torch.randn(20, 1, 80), *state),
                    input_names=["features", *names],
                    output_names=["logits", *[n.replace("0", "n") for n in names]])
    return make


def rnn_axes(cell):
    axes = {"features": {0: "seq", 1: "batch"}, "logits": {0: "seq", 1: "batch"}}
    for n in (["h0", "c0", "hn", "cn"] if cell == "LSTM" else ["h0", "hn"]):
        axes[n] = {1: "batch"}
    return axes


class LstmLm(nn.Module):
    """A word-level LSTM language model (embedding, 2-layer LSTM, vocabulary projection)."""

    def __init__(self, vocab=10000, d=256, hidden=512):
        super().__init__()
        self.emb, self.lstm = nn.Embedding(vocab, d), nn.LSTM(d, hidden, 2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids):
        return self.out(self.lstm(self.emb(ids))[0])


# ----------------------------------------------------------------- post-processing
def constant_weights(src, dst):
    """Moves every initializer into a Constant node, as paddle2onnx and tf2onnx often do."""
    m = onnx.load(src)
    consts = [onnx.helper.make_node("Constant", [], [t.name], value=t, name=f"const_{i}")
              for i, t in enumerate(m.graph.initializer)]
    del m.graph.initializer[:]
    nodes = consts + list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    onnx.save(m, dst)


def external_data(src, dst):
    """Saves the weights in DST.data beside the model, as any model over 2 GB must."""
    m = onnx.load(src)
    data = os.path.basename(dst) + ".data"
    if os.path.exists(dst + ".data"):
        os.remove(dst + ".data")
    onnx.save(m, dst, save_as_external_data=True, all_tensors_to_one_file=True, location=data,
              size_threshold=1024)


def qdq_int8(src, dst):
    """Static QDQ int8 quantization (bench/corpus/quantize_qdq.py)."""
    import quantize_qdq  # beside this file; needs node and bench/peer for its calibration run
    quantize_qdq.quantize(src, dst)


def fp16(src, dst):
    """float16 inside, float32 inputs and outputs (bench/corpus/convert_fp16.py)."""
    import convert_fp16  # beside this file
    convert_fp16.convert(src, dst)


POST = {"constant_weights": constant_weights, "external_data": external_data, "qdq_int8": qdq_int8,
        "fp16": fp16}
POST_DOC = {"constant_weights": "initializers moved into Constant nodes",
            "qdq_int8": "QDQ int8: per-channel int8 weights, per-tensor uint8 activations "
                        "calibrated on one random-input run (bench/corpus/quantize_qdq.py)",
            "external_data": "weights in an external data file (NAME.onnx.data)",
            "fp16": "float16 weights and activations, float32 inputs/outputs through Casts "
                    "(bench/corpus/convert_fp16.py)"}


# ----------------------------------------------------------------- the table
def cls(ctor, size=224, cost=1, **kw):
    return dict(family=ctor.__name__.rstrip("0123456789_").split("_x")[0], task="classification",
                source=TV, make=image(ctor, size, **kw), cost=cost)


M = torchvision.models
MODELS = {
    # classification: one of every family (two where the family has two designs)
    "alexnet": cls(M.alexnet),
    "vgg11_bn": dict(cls(M.vgg11_bn, cost=3), family="vgg"),
    "squeezenet1_1": dict(cls(M.squeezenet1_1), family="squeezenet"),
    "resnet18": dict(cls(M.resnet18), family="resnet"),
    "resnet50": dict(cls(M.resnet50, cost=2), family="resnet"),
    "resnext50_32x4d": dict(cls(M.resnext50_32x4d, cost=2), family="resnext"),
    "wide_resnet50_2": dict(cls(M.wide_resnet50_2, cost=3), family="wide_resnet"),
    "densenet121": dict(cls(M.densenet121, cost=3), family="densenet"),
    "googlenet": dict(cls(M.googlenet, aux_logits=False, init_weights=True), family="googlenet"),
    "inception_v3": dict(cls(M.inception_v3, size=299, cost=2, aux_logits=False,
                             init_weights=True), family="inception"),
    "mobilenet_v2": dict(cls(M.mobilenet_v2), family="mobilenet_v2"),
    "mobilenet_v3_small": dict(cls(M.mobilenet_v3_small), family="mobilenet_v3"),
    "mobilenet_v3_large": dict(cls(M.mobilenet_v3_large), family="mobilenet_v3"),
    "mnasnet1_0": dict(cls(M.mnasnet1_0), family="mnasnet"),
    "shufflenet_v2_x1_0": dict(cls(M.shufflenet_v2_x1_0), family="shufflenet"),
    "efficientnet_b0": dict(cls(M.efficientnet_b0, cost=2), family="efficientnet"),
    "efficientnet_v2_s": dict(cls(M.efficientnet_v2_s, cost=3), family="efficientnet"),
    "regnet_x_400mf": dict(cls(M.regnet_x_400mf), family="regnet"),
    "regnet_y_400mf": dict(cls(M.regnet_y_400mf), family="regnet"),
    "convnext_tiny": dict(cls(M.convnext_tiny, cost=2), family="convnext"),
    "vit_b_16": dict(cls(M.vit_b_16, cost=4), family="vit"),
    "swin_t": dict(cls(M.swin_t, cost=6), family="swin"),
    "swin_v2_t": dict(cls(M.swin_v2_t, cost=2), family="swin"),
    "maxvit_t": dict(cls(M.maxvit_t, cost=5), family="maxvit"),
    # segmentation (dict outputs returned as a tuple)
    "fcn_resnet50": dict(family="fcn", task="segmentation", source=TV, cost=3,
                         make=image(segmentation.fcn_resnet50, wrap=True, out=("out",),
                                    weights_backbone=None)),
    "deeplabv3_resnet50": dict(family="deeplabv3", task="segmentation", source=TV, cost=3,
                               make=image(segmentation.deeplabv3_resnet50, wrap=True,
                                          out=("out",), weights_backbone=None)),
    "deeplabv3_mobilenet_v3_large": dict(
        family="deeplabv3", task="segmentation", source=TV, cost=2,
        make=image(segmentation.deeplabv3_mobilenet_v3_large, size=320, wrap=True, out=("out",),
                   weights_backbone=None)),
    "lraspp_mobilenet_v3_large": dict(
        family="lraspp", task="segmentation", source=TV, cost=2,
        make=image(segmentation.lraspp_mobilenet_v3_large, size=320, wrap=True, out=("out",),
                   weights_backbone=None)),
    # detection: backbones alone, and two whole detectors with their post-processing
    "fpn_resnet50_backbone": dict(family="fpn", task="detection backbone (320x320)", source=TV,
                                  make=fpn_resnet50, cost=2),
    "ssdlite320_backbone": dict(family="ssdlite", task="detection backbone (320x320)",
                                source=TV, make=ssdlite_backbone, cost=2),
    "ssdlite320_mobilenet_v3_large": dict(
        family="ssdlite", task="detection with NMS post-processing (320x320)", source=TV,
        make=full_detector(detection.ssdlite320_mobilenet_v3_large), opset=11, cost=10),
    "fasterrcnn_mobilenet_v3_large_320_fpn": dict(
        family="faster_rcnn", task="two-stage detection with RoiAlign and NMS (320x320)",
        source=TV, make=full_detector(detection.fasterrcnn_mobilenet_v3_large_320_fpn),
        opset=11, cost=6),
    # video (8 frames of 112x112) and optical flow
    "r3d_18": dict(family="video_resnet", task="video classification (8x112x112)", source=TV,
                   make=clip(video.r3d_18), cost=2),
    "mc3_18": dict(family="video_resnet", task="video classification (8x112x112)", source=TV,
                   make=clip(video.mc3_18), cost=2),
    "r2plus1d_18": dict(family="video_resnet", task="video classification (8x112x112)",
                        source=TV, make=clip(video.r2plus1d_18), cost=2),
    "raft_small": dict(family="raft", task="optical flow (128x128, 12 iterations unrolled)",
                       source=TV, make=raft_small, opset=16, cost=4),
    # transformers written with torch.nn
    "bert_tiny": dict(family="bert", task="encoder L2 H128, attention mask", make=bert(2, 128, 2),
                      dynamic=SEQ_AXES, dims={"batch": 1, "seq": 128}, int_max=30522,
                      values=MASK_VALUES),
    "bert_mini": dict(family="bert", task="encoder L4 H256, attention mask", make=bert(4, 256, 4),
                      dynamic=SEQ_AXES, dims={"batch": 1, "seq": 128}, int_max=30522,
                      values=MASK_VALUES),
    "bert_small": dict(family="bert", task="encoder L4 H512, attention mask",
                       make=bert(4, 512, 8), dynamic=SEQ_AXES, dims={"batch": 1, "seq": 128},
                       int_max=30522, values=MASK_VALUES),
    "bert_medium": dict(family="bert", task="encoder L8 H512, attention mask",
                        make=bert(8, 512, 8), dynamic=SEQ_AXES, dims={"batch": 1, "seq": 128},
                        int_max=30522, values=MASK_VALUES, cost=2),
    "nn_transformer_encoder": dict(
        family="nn.TransformerEncoder", task="encoder L4 H256 pre-LN, key padding mask",
        source="torch.nn.TransformerEncoder", make=nn_encoder,
        dynamic={"embeddings": {0: "batch", 1: "seq"}, "padding_mask": {0: "batch", 1: "seq"},
                 "output": {0: "batch", 1: "seq"}},
        dims={"batch": 1, "seq": 128},
        values={"padding_mask": {"value": 0, "notes": "True = padding; all False"}}),
    "gpt_tiny": dict(family="gpt", task="decoder L2 H128, causal mask, no cache",
                     make=gpt(2, 128, 2, 8000), dynamic=gpt_axes(2),
                     dims={"batch": 1, "seq": 128}, int_max=8000),
    "gpt_small": dict(family="gpt", task="decoder L6 H512, causal mask, no cache",
                      make=gpt(6, 512, 8, 32000), dynamic=gpt_axes(6),
                      dims={"batch": 1, "seq": 128}, int_max=32000, cost=2),
    "gpt_small_past": dict(family="gpt", task="decoder L6 H512, one decode step with past "
                                              "key/values as inputs",
                           make=gpt(6, 512, 8, 32000, past=True), dynamic=gpt_axes(6, True),
                           dims={"batch": 1, "seq": 1, "past_seq": 127}, int_max=32000, cost=2),
    "nn_transformer_seq2seq": dict(
        family="nn.Transformer", task="encoder-decoder L3+3 H256, causal target mask",
        source="torch.nn.Transformer", make=seq2seq, cost=2,
        dynamic={"src_ids": {0: "batch", 1: "src_seq"}, "tgt_ids": {0: "batch", 1: "tgt_seq"},
                 "logits": {0: "batch", 1: "tgt_seq"}},
        dims={"batch": 1, "src_seq": 128, "tgt_seq": 32}, int_max=8000),
    # recurrent
    "lstm_2layer": dict(family="lstm", task="2-layer LSTM 80->256 with state, 100 frames",
                        source="torch.nn.LSTM", make=rnn("LSTM", 2), dynamic=rnn_axes("LSTM"),
                        dims={"seq": 100, "batch": 1}),
    "bilstm": dict(family="lstm", task="bidirectional LSTM 80->256, 100 frames",
                   source="torch.nn.LSTM", make=rnn("LSTM", 1, True), dynamic=rnn_axes("LSTM"),
                   dims={"seq": 100, "batch": 1}),
    "gru_2layer": dict(family="gru", task="2-layer GRU 80->256 with state, 100 frames",
                       source="torch.nn.GRU", make=rnn("GRU", 2), dynamic=rnn_axes("GRU"),
                       dims={"seq": 100, "batch": 1}),
    "lstm_lm": dict(family="lstm", task="word LSTM language model (vocab 10k), 64 tokens",
                    source="torch.nn.LSTM",
                    make=lambda: dict(model=LstmLm(), inputs=(torch.randint(0, 10000, (1, 9)),),
                                      input_names=["input_ids"], output_names=["logits"]),
                    dynamic={"input_ids": {0: "batch", 1: "seq"},
                             "logits": {0: "batch", 1: "seq"}},
                    dims={"batch": 1, "seq": 64}, int_max=10000),
    # export variants of the same networks (the "any model as exported" issue's cases)
    "resnet18_bn_kept": dict(base="resnet18", keep_bn=True, constant_folding=False),
    # Untrained norm layers (gamma 1, beta 0, mean 0, var 1): the exporter shares the equal
    # tensors behind Identity nodes, the "weights through Identity" habit.
    "resnet18_bn_kept_untrained": dict(base="resnet18", keep_bn=True, constant_folding=False,
                                       fresh_norms=True),
    "resnet18_no_folding": dict(base="resnet18", constant_folding=False),
    "resnet18_initializers_as_inputs": dict(base="resnet18", initializers_as_inputs=True),
    "resnet18_constant_weights": dict(base="resnet18", post="constant_weights"),
    "resnet18_external_data": dict(base="resnet18", post="external_data"),
    "resnet18_qdq_int8": dict(base="resnet18", post="qdq_int8"),
    "resnet18_fp16": dict(base="resnet18", post="fp16"),
    "resnet18_dynamic_batch": dict(base="resnet18", dims={"batch": 1},
                                   dynamic={"input": {0: "batch"}, "output": {0: "batch"}}),
    "resnet18_opset11": dict(base="resnet18", opset=11),
    "resnet18_opset13": dict(base="resnet18", opset=13),
    "resnet18_opset17": dict(base="resnet18", opset=17),
    "mobilenet_v2_bn_kept": dict(base="mobilenet_v2", keep_bn=True, constant_folding=False),
    "mobilenet_v2_dynamic_hw": dict(base="mobilenet_v2",
                                    dims={"batch": 1, "height": 224, "width": 224},
                                    dynamic={"input": {0: "batch", 2: "height", 3: "width"},
                                             "output": {0: "batch"}}),
    "efficientnet_b0_dynamic_batch": dict(base="efficientnet_b0", dims={"batch": 1},
                                          dynamic={"input": {0: "batch"},
                                                   "output": {0: "batch"}}),
    "convnext_tiny_opset17": dict(base="convnext_tiny", opset=17),
    "bert_mini_static": dict(base="bert_mini", dynamic=None, make=bert(4, 256, 4, static=True)),
    "bert_mini_opset11": dict(base="bert_mini", opset=11),
    "bert_mini_opset17": dict(base="bert_mini", opset=17),
    "bert_mini_no_folding": dict(base="bert_mini", constant_folding=False),
    "gpt_small_opset17": dict(base="gpt_small", opset=17),
}
for _s in MODELS.values():
    if "base" not in _s:
        _s.setdefault("source", "torch.nn (bench/corpus/corpus_models.py)")

# Networks left out on purpose, with the reason (listed in corpus.json and docs/corpus.md).
NOT_BUILT = {
    "s3d": "not built: needs clips of at least 16x224x224 (kernel 7 after a /32 stride), "
           "far over a second per run",
    "mvit_v1_b / mvit_v2_s": "not built: fixed 16x224x224 clips, ~64 GFLOPs per run",
    "raft_large": "not built: raft_small is the same design at a quarter of the compute",
    "keypoint/mask R-CNN, retinanet, fcos, ssd300_vgg16": "not built: one detector per design "
                                                          "is kept (Faster R-CNN, SSDlite)",
    "swin_v2_s, swin_v2_b": "not built: they fail as swin_v2_t does (aten::zero has no ONNX "
                            "export in torch 1.13)",
}
