// SPDX-License-Identifier: Apache-2.0
#pragma once
// Op kinds for fusion, after TVM's op-pattern taxonomy. The enum is ordered: a fused
// group's kind is the max of its members' kinds, and the fusion rules compare kinds.
//
//   Elementwise  one output element from the same-index input elements (Relu, Cast)
//   Broadcast    elementwise with broadcasting inputs (Add of a [C,1,1] bias)
//   Injective    each output element from one input element (Reshape, Transpose, Slice)
//   Reduction    an output element from many inputs along axes (ReduceMean, Softmax)
//   Anchor       out-elementwise-fusable compute (Conv, ConvTranspose, MatMul, Gemm):
//                may take an elementwise epilogue, never a second anchor
//   Opaque       anything that cannot be fused: control flow, data-dependent shapes,
//                random generators, custom domains, unknown ops
//
// classify() never fails: an op it does not know is Opaque, with `known` false.

#include <string_view>

#include "ir/graph.h"

namespace fx {

enum class OpKind {
  Elementwise = 0,
  Broadcast = 1,
  Injective = 2,
  Reduction = 3,
  Anchor = 4,
  Opaque = 5
};

struct OpClass {
  OpKind kind = OpKind::Opaque;
  bool control_flow = false;  // If / Loop / Scan / SequenceMap: bodies are not analysed
  bool known = false;         // the op is in classify()'s table (default ONNX domain)
  bool no_kernel = false;     // produces a constant or metadata only (Constant): no launch
};

// Kind of a node. Binary elementwise ops are Broadcast unless every non-constant input
// has the output's (static) shape, in which case they are Elementwise.
OpClass classify_node(const Graph& g, const Node& n);
// Kind from the op type alone (default domain; other domains are Opaque).
OpClass classify_op(std::string_view domain, std::string_view op_type);
inline OpKind classify(const Graph& g, const Node& n) {
  return classify_node(g, n).kind;
}

inline OpKind combine(OpKind a, OpKind b) {
  return a > b ? a : b;
}
// "elementwise", "broadcast", "injective", "reduction", "anchor", "opaque".
std::string_view op_kind_name(OpKind k);

}  // namespace fx
