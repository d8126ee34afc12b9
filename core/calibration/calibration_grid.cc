// SPDX-License-Identifier: Apache-2.0
#include "calibration/calibration_grid.h"

#include <algorithm>
#include <array>

#include "ir/graph_builder.h"

namespace fx {
namespace {

using Ints = std::vector<int64_t>;

class GridBuilder {
 public:
  ValueId input(const Ints& dims) { return b_.input(name("x"), dims); }
  ValueId weight(const Ints& dims, float v = 0.01f) {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    return b_.constant(name("w"),
                       TensorData::from_floats(dims, std::vector<float>(std::size_t(n), v)));
  }
  ValueId op(const std::string& type, const std::vector<ValueId>& in,
             const GraphBuilder::AttrList& attrs = {}, const Ints& shape = {}) {
    return b_.op(type, in, attrs, name(type.c_str()), shape.empty() ? Shape{} : Shape::of(shape));
  }
  void output(ValueId v) { b_.output(v); }
  Graph build() { return b_.build(); }

 private:
  std::string name(const char* what) { return std::string(what) + "_" + std::to_string(++n_); }
  GraphBuilder b_;
  int n_ = 0;
};

void memory_family(GridBuilder& b, const CacheSizes& c) {
  // The dispatch point: 64 floats, whose time is launch overhead only.
  std::vector<int64_t> sizes = memory_grid_sizes(c);
  for (int64_t bytes : sizes) {
    const int64_t n = std::max<int64_t>(64, bytes / 4);
    {  // Add -> Relu -> Mul
      auto x = b.input({1, n});
      auto y = b.op("Add", {x, b.weight({1}, 0.5f)});
      y = b.op("Relu", {y});
      b.output(b.op("Mul", {y, b.weight({1}, 0.7f)}));
    }
    if (bytes < 4096) continue;  // the rest need rows
    // Beyond L3 one of each kind is enough (and keeps the graph's memory in bounds).
    const bool beyond_l3 = bytes > c.l3;
    if (!beyond_l3) {  // Swish: Sigmoid -> Mul with its own input
      auto x = b.input({1, n});
      b.output(b.op("Mul", {x, b.op("Sigmoid", {x})}));
    }
    for (int64_t cols : {int64_t{64}, int64_t{1024}}) {
      if (beyond_l3 && cols == 64) continue;
      const int64_t rows = std::max<int64_t>(1, n / cols);
      auto x = b.input({rows, cols});
      auto y = b.op("Mul", {x, b.weight({1}, 0.125f)});
      b.output(b.op("Softmax", {y}, {{"axis", int64_t{-1}}}));
      auto x2 = b.input({rows, cols});
      auto z = b.op("Add", {x2, b.weight({cols}, 0.1f)});
      b.output(b.op("LayerNormalization", {z, b.weight({cols}, 1.0f), b.weight({cols}, 0.0f)},
                    {{"axis", int64_t{-1}}}));
    }
    {  // a relayout: [1, C, HW] -> [1, HW, C], then an elementwise op
      const int64_t ch = 64, hw = std::max<int64_t>(1, n / ch);
      auto x = b.input({1, ch, hw});
      auto t = b.op("Transpose", {x}, {{"perm", Ints{0, 2, 1}}}, {1, hw, ch});
      b.output(b.op("Add", {t, b.weight({1}, 1.0f)}));
    }
  }
}

void conv_family(GridBuilder& b) {
  const Ints pad1 = {1, 1, 1, 1};
  for (auto [ch, hw] : std::vector<std::pair<int64_t, int64_t>>{
           {16, 112}, {32, 56}, {64, 56}, {64, 28}, {128, 14}, {256, 7}}) {
    const Ints map = {1, ch, hw, hw};
    {  // 3x3 + bias + Relu
      auto x = b.input(map);
      auto y = b.op("Conv", {x, b.weight({ch, ch, 3, 3}), b.weight({ch})}, {{"pads", pad1}}, map);
      b.output(b.op("Relu", {y}));
    }
    {  // 1x1 + bias + Relu
      auto x = b.input(map);
      auto y = b.op("Conv", {x, b.weight({ch, ch, 1, 1}), b.weight({ch})}, {}, map);
      b.output(b.op("Relu", {y}));
    }
    {  // 3x3 -> BatchNormalization -> Relu
      auto x = b.input(map);
      auto y = b.op("Conv", {x, b.weight({ch, ch, 3, 3})}, {{"pads", pad1}}, map);
      auto p = [&](float v) { return b.weight({ch}, v); };
      y = b.op("BatchNormalization", {y, p(1.0f), p(0.0f), p(0.0f), p(1.0f)});
      b.output(b.op("Relu", {y}));
    }
    {  // 3x3 + residual Add + Relu
      auto x = b.input(map);
      auto y = b.op("Conv", {x, b.weight({ch, ch, 3, 3}), b.weight({ch})}, {{"pads", pad1}}, map);
      b.output(b.op("Relu", {b.op("Add", {y, x})}));
    }
  }
  // Chains: a fused conv chain keeps its activations in NHWC between convs (the codegen's
  // layout plan), which a single conv never shows. A residual block (conv-BN-Relu,
  // conv-BN, Add, Relu) and an inverted bottleneck (1x1 expand + Relu, depthwise 3x3 +
  // Relu, 1x1 project), per map size.
  for (auto [ch, hw] : std::vector<std::pair<int64_t, int64_t>>{{32, 56}, {64, 28}, {128, 14}}) {
    const Ints map = {1, ch, hw, hw};
    auto p = [&](float v) { return b.weight({ch}, v); };
    auto x = b.input(map);
    auto y = b.op("Conv", {x, b.weight({ch, ch, 3, 3})}, {{"pads", pad1}}, map);
    y = b.op("Relu", {b.op("BatchNormalization", {y, p(1.0f), p(0.0f), p(0.0f), p(1.0f)})});
    y = b.op("Conv", {y, b.weight({ch, ch, 3, 3})}, {{"pads", pad1}}, map);
    y = b.op("BatchNormalization", {y, p(1.0f), p(0.0f), p(0.0f), p(1.0f)});
    b.output(b.op("Relu", {b.op("Add", {y, x})}));
  }
  for (auto [ch, hw] :
       std::vector<std::pair<int64_t, int64_t>>{{24, 56}, {32, 28}, {64, 14}, {160, 7}}) {
    const int64_t wide = 6 * ch;
    const Ints map = {1, ch, hw, hw}, wide_map = {1, wide, hw, hw};
    auto x = b.input(map);
    auto y = b.op("Conv", {x, b.weight({wide, ch, 1, 1}), b.weight({wide})}, {}, wide_map);
    y = b.op("Relu", {y});
    y = b.op("Conv", {y, b.weight({wide, 1, 3, 3}), b.weight({wide})},
             {{"pads", pad1}, {"group", wide}}, wide_map);
    y = b.op("Relu", {y});
    b.output(b.op("Conv", {y, b.weight({ch, wide, 1, 1}), b.weight({ch})}, {}, map));
  }
  for (auto [ch, hw] : std::vector<std::pair<int64_t, int64_t>>{
           {32, 112}, {96, 56}, {144, 28}, {384, 14}, {960, 7}}) {
    const Ints map = {1, ch, hw, hw};
    auto x = b.input(map);
    auto y = b.op("Conv", {x, b.weight({ch, 1, 3, 3}), b.weight({ch})},
                  {{"pads", Ints{1, 1, 1, 1}}, {"group", ch}}, map);
    b.output(b.op("Relu", {y}));
  }
  for (auto [ch, hw] : std::vector<std::pair<int64_t, int64_t>>{{64, 112}, {128, 56}}) {
    auto x = b.input({1, ch, hw, hw});
    auto r = b.op("Relu", {x});
    b.output(
        b.op("MaxPool", {r},
             {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}},
             {1, ch, hw / 2, hw / 2}));
  }
}

void matmul_family(GridBuilder& b) {
  // A transformer MLP: MatMul + bias + Relu, MatMul + bias, residual Add, per width.
  for (auto [m, d] : std::vector<std::pair<int64_t, int64_t>>{{64, 256}, {128, 512}}) {
    auto x = b.input({m, d});
    auto y = b.op("MatMul", {x, b.weight({d, 4 * d})}, {}, {m, 4 * d});
    y = b.op("Relu", {b.op("Add", {y, b.weight({4 * d}, 0.1f)})});
    y = b.op("MatMul", {y, b.weight({4 * d, d})}, {}, {m, d});
    y = b.op("Add", {y, b.weight({d}, 0.1f)});
    b.output(b.op("Add", {y, x}));
  }
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{16, 1024, 1024},
                                                            {64, 256, 256},
                                                            {196, 768, 768},
                                                            {128, 768, 3072},
                                                            {512, 512, 512},
                                                            {1024, 128, 512}}) {
    {
      auto x = b.input({m, k});
      auto y = b.op("MatMul", {x, b.weight({k, n})}, {}, {m, n});
      y = b.op("Add", {y, b.weight({n}, 0.1f)});
      b.output(b.op("Relu", {y}));
    }
    {
      auto x = b.input({m, k});
      auto y = b.op("Gemm", {x, b.weight({n, k}), b.weight({n}, 0.1f)}, {{"transB", int64_t{1}}},
                    {m, n});
      b.output(b.op("Relu", {y}));
    }
  }
}

}  // namespace

std::vector<int64_t> memory_grid_sizes(const CacheSizes& c) {
  std::vector<int64_t> s = {256, c.l1d / 2, c.l2 / 2, c.l3 / 2,
                            std::min<int64_t>(2 * c.l3, kMaxGridTensorBytes)};
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

std::vector<GridFamily> calibration_grid(const CacheSizes& c) {
  std::vector<GridFamily> out;
  {
    GridBuilder b;
    memory_family(b, c);
    out.push_back({"memory", b.build()});
  }
  {
    GridBuilder b;
    conv_family(b);
    out.push_back({"conv", b.build()});
  }
  {
    GridBuilder b;
    matmul_family(b);
    out.push_back({"matmul", b.build()});
  }
  return out;
}

}  // namespace fx
