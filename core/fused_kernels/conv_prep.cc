// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/conv_prep.h"

#include <cstdlib>

#include "fused_kernels/conv_path.h"
#include "ir/graph_queries.h"
#include "onnx/bn_fold.h"
#include "util/error.h"

namespace fx {

namespace {

// Applies a Fold post-op to [O, ...] weights and [O] bias.
void fold_into(std::vector<float>& w, std::vector<float>& bias, const std::string& alg,
               const std::vector<float>& c) {
  const std::size_t oc = bias.size(), per = w.size() / oc;
  for (std::size_t o = 0; o < oc; ++o) {
    const float k = c.size() == 1 ? c[0] : c.at(o);
    if (alg == "add") bias[o] += k;
    if (alg == "sub") bias[o] -= k;
    if (alg == "mul" || alg == "div") {
      for (std::size_t i = 0; i < per; ++i)
        w[o * per + i] = alg == "mul" ? w[o * per + i] * k : w[o * per + i] / k;
      bias[o] = alg == "mul" ? bias[o] * k : bias[o] / k;
    }
  }
}

}  // namespace

std::shared_ptr<ConvPrep> prepare_conv(const Graph& g, const ConvPostOpPlan& plan) {
  auto p = std::make_shared<ConvPrep>();
  p->plan = plan;
  const Node& n = g.node(plan.conv);
  p->name = n.name;
  p->group = n.attrs.get_int("group", 1);
  p->strides = n.attrs.get_ints("strides");
  p->dilations = n.attrs.get_ints("dilations");
  p->pads = n.attrs.get_ints("pads");
  p->auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  const Value& w = g.value(n.inputs[1]);
  if (!w.is_constant() || w.data->dtype() != DType::Float32)
    throw Error("fused Conv '" + n.name + "': weights are not constant float32");
  p->w_dims = w.data->dims();
  if (auto bytes = g.value(n.inputs[0]).byte_size()) p->x_bytes = static_cast<int64_t>(*bytes);
  p->weights = w.data->to_floats();
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    if (!g.value(n.inputs[2]).is_constant())
      throw Error("fused Conv '" + n.name + "': bias is not constant");
    p->bias = g.value(n.inputs[2]).data->to_floats();
  } else {
    p->bias.assign(static_cast<std::size_t>(p->w_dims.at(0)), 0.f);
  }
  if (plan.bn != kNoNode) {
    const Node& bn = g.node(plan.bn);
    auto f = [&](int i) {
      return g.value(bn.inputs[static_cast<std::size_t>(i)]).data->to_floats();
    };
    auto folded = fold_bn_weights(p->weights, p->w_dims[0], p->bias, f(1), f(2), f(3), f(4),
                                  bn.attrs.get_float("epsilon", 1e-5f));
    p->weights = std::move(folded.weights);
    p->bias = std::move(folded.bias);
  }
  for (const ConvPostOp& po : plan.post_ops) {
    if (po.kind != ConvPostOp::Kind::Fold) continue;
    auto c = constant_data(g, po.operand)->to_floats();
    if (c.size() != 1 && c.size() != p->bias.size())
      throw Error("fused Conv '" + n.name + "': operand of '" + po.node +
                  "' does not match the output channels");
    fold_into(p->weights, p->bias, po.alg, c);
  }
  // Without Binary post-ops the epilogue can run as our own pass (conv_epilogue.h).
  std::vector<EpilogueOp> ops;
  bool own = true;
  for (std::size_t k = 0, in = 1; k < plan.post_ops.size(); ++k) {
    const ConvPostOp& po = plan.post_ops[k];
    if (po.kind == ConvPostOp::Kind::Fold) continue;
    if (po.kind == ConvPostOp::Kind::Sum) p->sum_input = static_cast<int>(in);
    if (po.kind != ConvPostOp::Kind::Eltwise) ++in;
    EpilogueOp e;
    own = own && po.kind != ConvPostOp::Kind::Binary &&
          epilogue_op_for(po.alg, po.alpha, po.beta, &e);
    ops.push_back(e);
  }
  if (own) p->epilogue.emplace(std::move(ops));
  // A grouped one only where oneDNN runs it natively on NHWC (for the input's static
  // shape): elsewhere NHWC would cost reorders around a slower kernel.
  const auto& x = g.value(n.inputs[0]).shape;
  p->channels_last =
      p->w_dims.size() == 4 && !std::getenv("FX_CONV_PLAIN") &&
      (p->group == 1 || (p->epilogue && p->w_dims[1] == 1 && p->w_dims[0] == p->group) ||
       (x.is_static() && grouped_nhwc_native(*p, x.static_dims())));
  return p;
}

}  // namespace fx
