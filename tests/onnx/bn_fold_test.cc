// SPDX-License-Identifier: Apache-2.0
// Conv + BatchNormalization folding: the rewrite removes the BN and the folded model
// computes the same outputs as the original on random inputs.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "ir/graph_builder.h"
#include "onnx/bn_fold.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"
#include "util/error.h"

namespace fx {
namespace {

std::vector<float> random_floats(std::size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

Tensor random_tensor(const std::vector<int64_t>& dims, uint32_t seed) {
  return Tensor::from_floats(dims, random_floats(static_cast<std::size_t>(dims_numel(dims)), seed));
}

struct Diff {
  double max_abs = 0, max_rel = 0;
};

// Relative error against max(|expected|, 0.1), as the codegen tests compare.
Diff compare(const std::vector<Tensor>& expected, const std::vector<Tensor>& actual) {
  Diff d;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto e = expected[i].to_floats(), a = actual.at(i).to_floats();
    if (e.size() != a.size() || expected[i].dims() != actual[i].dims()) return {1e30, 1e30};
    for (std::size_t k = 0; k < e.size(); ++k) {
      double ad = std::fabs(double(e[k]) - double(a[k]));
      d.max_abs = std::max(d.max_abs, ad);
      d.max_rel = std::max(d.max_rel, ad / std::max(std::fabs(double(e[k])), 0.1));
    }
  }
  return d;
}

Graph conv_bn_graph(bool conv_bias, bool extra_consumer = false) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 8, 8});
  auto w = b.constant("w", TensorData::from_floats({4, 3, 3, 3}, random_floats(108, 1)));
  std::vector<ValueId> in{x, w};
  if (conv_bias) in.push_back(b.constant("cb", TensorData::from_floats({4}, random_floats(4, 2))));
  auto y = b.op("Conv", in, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv",
                Shape::of({2, 4, 8, 8}));
  auto gamma = b.constant("gamma", TensorData::from_floats({4}, random_floats(4, 3, 0.5f, 2.f)));
  auto beta = b.constant("beta", TensorData::from_floats({4}, random_floats(4, 4)));
  auto mean = b.constant("mean", TensorData::from_floats({4}, random_floats(4, 5)));
  auto var = b.constant("var", TensorData::from_floats({4}, random_floats(4, 6, 0.1f, 3.f)));
  auto z = b.op("BatchNormalization", {y, gamma, beta, mean, var}, {{"epsilon", 1e-3f}}, "bn");
  b.output(b.op("Relu", {z}, {}, "relu"));
  if (extra_consumer) b.output(b.op("Sigmoid", {y}, {}, "side"));
  return b.build();
}

void expect_equivalent(const Graph& a, const Graph& b) {
  std::map<std::string, Tensor> in{{"x", random_tensor({2, 3, 8, 8}, 42)}};
  auto ya = Executor(a).run(in);
  auto yb = Executor(b).run(in);
  auto d = compare(ya, yb);
  EXPECT_LT(d.max_rel, 1e-4) << "max abs " << d.max_abs;
}

TEST(BnFold, FoldsConvWithBiasAndKeepsOutputs) {
  Graph g = conv_bn_graph(true);
  auto r = fold_conv_bn(g);
  EXPECT_EQ(r.graph.node_count(), g.node_count() - 1);
  ASSERT_EQ(r.folded_bn, std::vector<std::string>{"bn"});
  EXPECT_EQ(r.into_conv, std::vector<std::string>{"conv"});
  for (const auto& n : r.graph.nodes()) EXPECT_NE(n.op_type, "BatchNormalization");
  r.graph.validate();
  expect_equivalent(g, r.graph);
}

TEST(BnFold, FoldsConvWithoutBias) {
  Graph g = conv_bn_graph(false);
  auto r = fold_conv_bn(g);
  ASSERT_EQ(r.folded_bn.size(), 1u);
  const Node& conv = r.graph.node(r.graph.find_node("conv"));
  ASSERT_EQ(conv.inputs.size(), 3u);  // a bias appears
  EXPECT_EQ(r.graph.value(conv.inputs[2]).name, "conv.folded_B");
  expect_equivalent(g, r.graph);
}

TEST(BnFold, LeavesPairWhoseConvOutputIsSharedAlone) {
  Graph g = conv_bn_graph(true, true);
  NodeId conv = g.find_node("conv"), bn = g.find_node("bn");
  EXPECT_NE(conv_bn_fold_blocker(g, conv, bn).find("used outside"), std::string::npos);
  auto r = fold_conv_bn(g);
  EXPECT_TRUE(r.folded_bn.empty());
  EXPECT_EQ(r.graph.node_count(), g.node_count());
}

TEST(BnFold, WeightFormulaMatchesTheSeeds) {
  // One channel, W = [2, 4], b = 1, gamma = 3, beta = 0.5, mean = 2, var = 3, eps = 1.
  auto f = fold_bn_weights({2, 4}, 1, {1}, {3}, {0.5f}, {2}, {3}, 1.f);
  // s = 3 / sqrt(4) = 1.5
  EXPECT_FLOAT_EQ(f.weights[0], 3.f);
  EXPECT_FLOAT_EQ(f.weights[1], 6.f);
  EXPECT_FLOAT_EQ(f.bias[0], (1.f - 2.f) * 1.5f + 0.5f);
  EXPECT_THROW(fold_bn_weights({2, 4}, 1, {}, {3, 1}, {0}, {0}, {1}, 1.f), Error);
}

}  // namespace
}  // namespace fx
