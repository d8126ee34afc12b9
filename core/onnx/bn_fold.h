// SPDX-License-Identifier: Apache-2.0
#pragma once
// Conv + BatchNormalization folding (a "graph fusion" in the seeds' terms): an
// inference-time BN after a Conv is an affine map per output channel, so it folds
// into the Conv's weights and bias:
//
//   s   = gamma / sqrt(var + eps)
//   W'  = W * s          (per output channel)
//   b'  = (b - mean) * s + beta      (b = 0 when the Conv has no bias)
//
// fold_conv_bn() is a graph rewrite (a new Graph, ids not preserved) used by the
// export and by tests; fold_bn_weights() is the arithmetic alone, shared with the
// fused Conv kernel of codegen.

#include <string>
#include <vector>

#include "ir/graph.h"

namespace fx {

struct FoldedConv {
  std::vector<float> weights;  // same layout as W: [O, I/g, k...]
  std::vector<float> bias;     // [O]
};

// W is [O, ...] (numel = O * per_channel); bias may be empty (no Conv bias).
// Throws fx::Error when a parameter's size is not O.
FoldedConv fold_bn_weights(const std::vector<float>& w, int64_t out_channels,
                           const std::vector<float>& bias, const std::vector<float>& gamma,
                           const std::vector<float>& beta, const std::vector<float>& mean,
                           const std::vector<float>& var, float epsilon);

// A Conv -> BatchNormalization pair that can be folded: float32 constant W and BN
// parameters, the Conv output read only by the BN and not a graph output, BN in
// inference form (one output). Empty string when it can, otherwise why not.
std::string conv_bn_fold_blocker(const Graph& g, NodeId conv, NodeId bn);

struct BnFoldResult {
  Graph graph;
  // Names of the BN nodes removed, and the Conv each went into (same order).
  std::vector<std::string> folded_bn;
  std::vector<std::string> into_conv;
};

// Folds every foldable Conv -> BatchNormalization pair. The Conv keeps its name and
// now writes the BN's output value; the new weights are constants named
// "<conv>.folded_W" / "<conv>.folded_B". Other nodes and values are copied.
BnFoldResult fold_conv_bn(const Graph& g);

}  // namespace fx
