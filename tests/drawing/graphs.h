// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small graphs with name scopes for the layout tests, built with GraphBuilder.

#include <string>
#include <vector>

#include "ir/graph_builder.h"

namespace fx::testing {

// Appends an op to b with the given scope; returns its output.
inline ValueId scoped_op(GraphBuilder& b, const std::string& op, const std::vector<ValueId>& in,
                         const std::string& scope) {
  ValueId out = b.op(op, in, {}, scope + "/" + op + "_" + std::to_string(b.graph().node_count()));
  b.graph().node(b.graph().value(out).producer).scope = scope;
  return out;
}

// `blocks` transformer-like blocks "layers.i" (each: LayerNorm, MatMul, Add, Relu,
// MatMul, Add with a residual), then a "head" scope with a different op list.
inline Graph repeated_blocks(int blocks, int extra_ops_per_block = 0) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 16, 64});
  for (int i = 0; i < blocks; ++i) {
    const std::string s = "layers." + std::to_string(i);
    ValueId h = scoped_op(b, "LayerNormalization", {x}, s);
    h = scoped_op(b, "MatMul", {h}, s + "/mlp");
    h = scoped_op(b, "Relu", {h}, s + "/mlp");
    for (int k = 0; k < extra_ops_per_block; ++k) h = scoped_op(b, "Mul", {h}, s + "/mlp");
    h = scoped_op(b, "MatMul", {h}, s + "/mlp");
    x = scoped_op(b, "Add", {x, h}, s);
  }
  ValueId y = scoped_op(b, "MatMul", {x}, "head");
  b.output(scoped_op(b, "Softmax", {y}, "head"));
  return b.build();
}

// A ResNet-like stem and `blocks` basic blocks "layer1/i" (Conv, BatchNorm, Relu, Conv,
// BatchNorm, Add, Relu) whose Add takes the block's input: the identity skip comes
// from outside the block, past the whole main chain of the block.
inline Graph residual_blocks(int blocks) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 8, 16, 16});
  x = scoped_op(b, "Conv", {x}, "conv1");
  x = scoped_op(b, "Relu", {x}, "relu");
  for (int i = 0; i < blocks; ++i) {
    const std::string s = "layer1/" + std::to_string(i);
    ValueId h = scoped_op(b, "Conv", {x}, s + "/conv1");
    h = scoped_op(b, "BatchNormalization", {h}, s + "/bn1");
    h = scoped_op(b, "Relu", {h}, s + "/relu");
    h = scoped_op(b, "Conv", {h}, s + "/conv2");
    h = scoped_op(b, "BatchNormalization", {h}, s + "/bn2");
    h = scoped_op(b, "Add", {h, x}, s);
    x = scoped_op(b, "Relu", {h}, s + "/relu_1");
  }
  b.output(scoped_op(b, "GlobalAveragePool", {x}, "avgpool"));
  return b.build();
}

// A chain of n ops with no scope at all, as an exporter that names nothing gives.
inline Graph flat_chain(int n) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 8});
  for (int i = 0; i < n; ++i) x = b.op(i % 2 ? "Relu" : "Add", {x});
  b.output(x);
  return b.build();
}

// A scope-less chain with branches: blocks of Relu, Relu and an Add that also reads the
// block's input (a residual skip), n ops in all.
inline Graph flat_residual_chain(int n) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 8});
  for (int i = 0; i + 3 <= n; i += 3) {
    ValueId r = b.op("Relu", {b.op("Relu", {x})});
    x = b.op("Add", {r, x});
  }
  for (int i = n - n % 3; i < n; ++i) x = b.op("Relu", {x});
  b.output(x);
  return b.build();
}

// A scope-less level whose only cut points are at its start: a stem of `stem` ops, then
// two branches of `branch` ops side by side (two tensors cross every boundary) merged by
// an Add, as a detection head's box and score branches run.
inline Graph stem_then_two_branches(int stem, int branch) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 8});
  for (int i = 0; i < stem; ++i) x = b.op(i % 2 ? "Sigmoid" : "Conv", {x});
  ValueId l = x, r = x;
  for (int i = 0; i < branch; ++i) l = b.op("Relu", {l});
  for (int i = 0; i < branch; ++i) r = b.op("Tanh", {r});
  b.output(b.op("Add", {l, r}));
  return b.build();
}

}  // namespace fx::testing
