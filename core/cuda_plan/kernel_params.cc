// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/kernel_params.h"

#include "util/error.h"

namespace fx::cuda {

namespace {

[[noreturn]] void unsupported(const Node& n, const std::string& why) {
  throw Error("CUDA: " + n.op_type + " node '" + n.name + "': " + why);
}

std::vector<int64_t> static_dims(const Graph& g, const Node& n, ValueId v) {
  const Value& val = g.value(v);
  if (!val.shape.is_static())
    unsupported(n, "'" + val.name + "' has no static shape (" + val.shape.str() + ")");
  if (val.dtype != DType::Float32) unsupported(n, "'" + val.name + "' is not float32");
  return val.shape.static_dims();
}

// Pads [h_begin, w_begin, h_end, w_end] of a 2-D window op, from pads or auto_pad.
std::array<int64_t, 2> symmetric_pads(const Node& n, const std::vector<int64_t>& in_hw,
                                      const std::vector<int64_t>& out_hw,
                                      const std::array<int64_t, 2>& window,
                                      const std::array<int64_t, 2>& stride,
                                      const std::array<int64_t, 2>& dilation) {
  const std::string ap = n.attrs.get_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    for (int d = 0; d < 2; ++d) {
      const int64_t total = std::max<int64_t>(
          0, (out_hw[d] - 1) * stride[d] + (window[d] - 1) * dilation[d] + 1 - in_hw[d]);
      const int64_t small = total / 2;
      pads[d] = ap == "SAME_UPPER" ? small : total - small;
      pads[d + 2] = total - pads[d];
    }
  } else if (ap == "VALID") {
    pads = {0, 0, 0, 0};
  }
  if (pads.size() != 4) unsupported(n, "pads must have 4 values for a 2-D op");
  if (pads[0] != pads[2] || pads[1] != pads[3])
    unsupported(n, "asymmetric pads are not supported by the cuDNN path");
  return {pads[0], pads[1]};
}

std::array<int64_t, 2> pair_attr(const Node& n, const char* name, int64_t def) {
  auto v = n.attrs.get_ints(name, {def, def});
  if (v.size() != 2) unsupported(n, std::string(name) + " must have 2 values for a 2-D op");
  return {v[0], v[1]};
}

}  // namespace

std::vector<int64_t> generated_dims(const Graph& g, const LoweredGroup& lg) {
  std::vector<int64_t> dims(static_cast<std::size_t>(lg.rank), 1);
  for (const KInput& in : lg.inputs) {
    const Value& v = g.value(in.value);
    if (!v.shape.is_static())
      throw Error("CUDA: generated kernel " + lg.entry + ": '" + v.name + "' has no static shape");
    const auto d = v.shape.static_dims();
    const int off = lg.rank - static_cast<int>(d.size());
    for (int a = std::max(0, off); a < lg.rank; ++a) {
      const auto ua = static_cast<std::size_t>(a);
      if (in.bcast[ua]) continue;
      const int64_t x = d[static_cast<std::size_t>(a - off)];
      if (dims[ua] != 1 && dims[ua] != x)
        throw Error("CUDA: generated kernel " + lg.entry + ": inputs disagree on axis " +
                    std::to_string(a));
      dims[ua] = x;
    }
  }
  return dims;
}

ConvParams conv_params(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  const auto x = static_dims(g, n, n.inputs.at(0));
  const auto w = static_dims(g, n, n.inputs.at(1));
  const auto y = static_dims(g, n, n.outputs.at(0));
  if (x.size() != 4 || w.size() != 4 || y.size() != 4)
    unsupported(n, "only 2-D convolutions (rank-4 NCHW tensors) run on the GPU");
  ConvParams p;
  p.n = x[0], p.c = x[1], p.h = x[2], p.w = x[3];
  p.k = w[0], p.r = w[2], p.s = w[3];
  p.out_h = y[2], p.out_w = y[3];
  p.groups = n.attrs.get_int("group", 1);
  if (p.groups < 1 || p.c % p.groups || w[1] != p.c / p.groups)
    unsupported(n, "the weight's channels do not match the input's and the group count");
  p.stride = pair_attr(n, "strides", 1);
  p.dilation = pair_attr(n, "dilations", 1);
  p.pad = symmetric_pads(n, {p.h, p.w}, {p.out_h, p.out_w}, {p.r, p.s}, p.stride, p.dilation);
  p.has_bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
  for (int d = 0; d < 2; ++d) {
    const int64_t in = d ? p.w : p.h, win = d ? p.s : p.r, out = d ? p.out_w : p.out_h;
    const int64_t expect = (in + 2 * p.pad[d] - p.dilation[d] * (win - 1) - 1) / p.stride[d] + 1;
    if (expect != out)
      unsupported(n, "the output's spatial dims do not follow from the attributes");
  }
  return p;
}

PoolParams pool_params(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  const auto x = static_dims(g, n, n.inputs.at(0));
  const auto y = static_dims(g, n, n.outputs.at(0));
  if (x.size() != 4 || y.size() != 4) unsupported(n, "only 2-D pooling runs on the GPU");
  PoolParams p;
  p.n = x[0], p.c = x[1], p.h = x[2], p.w = x[3], p.out_h = y[2], p.out_w = y[3];
  const std::string& op = n.op_type;
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    p.mode = op == "GlobalMaxPool" ? PoolParams::Max : PoolParams::Average;
    p.window = {p.h, p.w};
    p.stride = {1, 1};
    return p;
  }
  if (n.attrs.get_int("ceil_mode", 0)) unsupported(n, "ceil_mode is not supported");
  auto k = n.attrs.get_ints("kernel_shape");
  if (k.size() != 2) unsupported(n, "kernel_shape must have 2 values");
  p.window = {k[0], k[1]};
  p.stride = pair_attr(n, "strides", 1);
  if (op == "MaxPool") {
    if (n.outputs.size() > 1 && n.outputs[1] != kNoValue)
      unsupported(n, "the Indices output is not supported");
    if (pair_attr(n, "dilations", 1) != std::array<int64_t, 2>{1, 1})
      unsupported(n, "dilations are not supported");
  }
  p.pad = symmetric_pads(n, {p.h, p.w}, {p.out_h, p.out_w}, p.window, p.stride, {1, 1});
  p.mode = op == "MaxPool"                           ? PoolParams::Max
           : n.attrs.get_int("count_include_pad", 0) ? PoolParams::AverageCountPad
                                                     : PoolParams::Average;
  return p;
}

BatchNormParams batchnorm_params(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  const auto x = static_dims(g, n, n.inputs.at(0));
  if (x.size() < 2) unsupported(n, "the input needs a channel axis (rank 2 or more)");
  if (n.attrs.get_int("training_mode", 0)) unsupported(n, "training_mode is not supported");
  for (std::size_t i = 1; i < 5; ++i) {
    if (i >= n.inputs.size() || n.inputs[i] == kNoValue) unsupported(n, "an operand is missing");
    const auto d = static_dims(g, n, n.inputs[i]);
    if (d.size() != 1 || d[0] != x[1])
      unsupported(n, "scale, bias, mean and var must have one value per channel");
  }
  BatchNormParams p;
  p.n = x[0];
  p.c = x[1];
  if (x.size() > 2) p.h = x[2];
  for (std::size_t d = 3; d < x.size(); ++d) p.h *= x[d];
  p.epsilon = n.attrs.get_float("epsilon", 1e-5f);
  return p;
}

MatmulParams matmul_params(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  auto a = static_dims(g, n, n.inputs.at(0));
  auto b = static_dims(g, n, n.inputs.at(1));
  MatmulParams p;
  if (n.op_type == "Gemm") {
    if (a.size() != 2 || b.size() != 2) unsupported(n, "Gemm operands must be 2-D");
    p.trans_a = n.attrs.get_int("transA", 0) != 0;
    p.trans_b = n.attrs.get_int("transB", 0) != 0;
    p.alpha = n.attrs.get_float("alpha", 1.f);
    p.m = p.trans_a ? a[1] : a[0];
    p.k = p.trans_a ? a[0] : a[1];
    p.n = p.trans_b ? b[0] : b[1];
    if ((p.trans_b ? b[1] : b[0]) != p.k) unsupported(n, "inner dims differ");
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      const auto c = static_dims(g, n, n.inputs[2]);
      int64_t numel = 1;
      for (int64_t d : c) numel *= d;
      if (numel != p.n || c.empty() || c.back() != p.n)
        unsupported(n, "only a C of N values (one per column) is supported");
      p.bias = n.inputs[2];
      p.beta = n.attrs.get_float("beta", 1.f);
    }
    return p;
  }
  if (a.empty() || b.empty()) unsupported(n, "scalar operands are not supported");
  if (a.size() == 1) a.insert(a.begin(), 1);
  const bool b_vector = b.size() == 1;
  if (b_vector) b.push_back(1);
  p.m = a[a.size() - 2], p.k = a.back(), p.n = b.back();
  if (b[b.size() - 2] != p.k) unsupported(n, "inner dims differ");
  const std::vector<int64_t> ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  int64_t na = 1, nb = 1;
  for (int64_t d : ab) na *= d;
  for (int64_t d : bb) nb *= d;
  if (na > 1 && nb > 1) {
    // Both batched: they must agree (right-aligned, no broadcasting between them).
    if (ab != bb) unsupported(n, "batch dims that broadcast against each other are not supported");
    p.batch = na;
    p.stride_a = p.m * p.k;
    p.stride_b = p.k * p.n;
  } else if (na > 1) {
    // One shared B: the batch folds into M (rows of A are contiguous).
    p.m *= na;
  } else {
    p.batch = nb;
    p.stride_b = nb > 1 ? p.k * p.n : 0;
  }
  return p;
}

}  // namespace fx::cuda
