// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small graphs the CUDA plan tests share: a residual CNN block and a transformer MLP /
// attention-score block, with every shape given (GraphBuilder infers none).

#include <random>
#include <vector>

#include "analysis/analysis_result.h"
#include "ir/graph_builder.h"

namespace fx::cuda::testing {

inline std::shared_ptr<TensorData> seeded(std::vector<int64_t> dims, uint32_t seed,
                                          float scale = 0.1f) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = u(rng);
  return TensorData::from_floats(dims, v);
}

// x[2,8,16,16] -> conv1(+bias) -> relu1 -> pool -> conv2 -> add(residual: pool) -> relu2
// -> gap -> flatten -> gemm(+C): 9 nodes, 8 kernels unfused (flatten is a view).
inline Graph residual_cnn() {
  GraphBuilder b;
  auto x = b.input("x", {2, 8, 16, 16});
  auto c1 =
      b.op("Conv", {x, b.constant("w1", seeded({8, 8, 3, 3}, 1)), b.constant("b1", seeded({8}, 2))},
           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv1", Shape::of({2, 8, 16, 16}));
  auto r1 = b.op("Relu", {c1}, {}, "relu1");
  auto p =
      b.op("MaxPool", {r1},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
           "pool", Shape::of({2, 8, 8, 8}));
  auto c2 = b.op("Conv", {p, b.constant("w2", seeded({8, 8, 3, 3}, 3))},
                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv2", Shape::of({2, 8, 8, 8}));
  auto a = b.op("Add", {c2, p}, {}, "add");
  auto r2 = b.op("Relu", {a}, {}, "relu2");
  auto g = b.op("GlobalAveragePool", {r2}, {}, "gap", Shape::of({2, 8, 1, 1}));
  auto f = b.op("Flatten", {g}, {}, "flatten", Shape::of({2, 8}));
  b.output(b.op("Gemm", {f, b.constant("wf", seeded({4, 8}, 4)), b.constant("bf", seeded({4}, 5))},
                {{"transB", int64_t{1}}}, "fc", Shape::of({2, 4})));
  return b.build();
}

// h[2,16,32] -> mm1 (x W1[32,64]) -> add1 (+ bias[64]) -> relu -> mm2 (x W2[64,32])
// -> add2 (+ bias[32]) -> transpose [2,32,16] ; and scores = softmax(mm2_out * 0.5).
inline Graph mlp_block() {
  GraphBuilder b;
  auto h = b.input("h", {2, 16, 32});
  auto m1 =
      b.op("MatMul", {h, b.constant("W1", seeded({32, 64}, 6))}, {}, "mm1", Shape::of({2, 16, 64}));
  auto a1 = b.op("Add", {m1, b.constant("B1", seeded({64}, 7))}, {}, "add1");
  auto r = b.op("Relu", {a1}, {}, "relu");
  auto m2 =
      b.op("MatMul", {r, b.constant("W2", seeded({64, 32}, 8))}, {}, "mm2", Shape::of({2, 16, 32}));
  auto a2 = b.op("Add", {m2, b.constant("B2", seeded({32}, 9))}, {}, "add2");
  b.output(b.op("Transpose", {a2}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, "transpose",
                Shape::of({2, 32, 16})));
  auto s = b.op("Mul", {a2, b.constant("half", TensorData::from_floats({}, {0.5f}))}, {}, "scale");
  b.output(b.op("Softmax", {s}, {{"axis", int64_t{-1}}}, "softmax"));
  return b.build();
}

inline FusionGroup group_of(const Graph& g, const std::string& id,
                            const std::vector<std::string>& nodes, const std::string& pattern) {
  FusionGroup fg;
  fg.id = id;
  fg.nodes = nodes;
  fg.pattern = pattern;
  fg.status = GroupStatus::Accepted;
  for (const auto& n : nodes) {
    fg.node_ids.push_back(g.find_node(n));
    fg.ops.push_back(g.node(g.find_node(n)).op_type);
  }
  return fg;
}

}  // namespace fx::cuda::testing
