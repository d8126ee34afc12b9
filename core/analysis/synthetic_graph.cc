// SPDX-License-Identifier: Apache-2.0
#include "analysis/synthetic_graph.h"

#include <map>
#include <random>

#include "ir/graph_builder.h"

namespace fx {
namespace {

class Generator {
 public:
  explicit Generator(const SyntheticGraphOptions& o) : o_(o), rng_(o.seed) {}

  Graph run() {
    const int64_t c = o_.channels, h = o_.spatial;
    ValueId x = b_.input("x", {1, c, h, h});
    while (static_cast<int>(b_.graph().node_count()) < o_.node_count) {
      int pick = static_cast<int>(rng_() % 10);
      if (pick < 6)
        x = conv_block(x);
      else if (pick < 9)
        x = transformer_block(x);
      else
        x = opaque(x);
    }
    b_.output(x);
    return b_.build();
  }

 private:
  std::string name(const char* what) { return std::string(what) + "_" + std::to_string(++n_); }

  // One weight tensor per shape, shared by every node using it: the analysis reads
  // shapes, and 100,000 nodes of real weights would not fit.
  ValueId weight(const std::vector<int64_t>& dims) {
    auto& data = weights_[dims];
    if (!data) {
      int64_t n = 1;
      for (auto d : dims) n *= d;
      data = TensorData::from_floats(dims, std::vector<float>(static_cast<std::size_t>(n), 0.01f));
    }
    return b_.constant(name("w"), data);
  }
  ValueId scalar(float v) { return b_.constant(name("s"), TensorData::from_floats({}, {v})); }

  ValueId conv_bn_relu(ValueId x, bool relu) {
    const int64_t c = o_.channels;
    auto y = b_.op("Conv", {x, weight({c, c, 3, 3})}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                   name("conv"));
    auto p = [&] { return weight({c}); };
    y = b_.op("BatchNormalization", {y, p(), p(), p(), p()}, {}, name("bn"));
    return relu ? b_.op("Relu", {y}, {}, name("relu")) : y;
  }

  ValueId conv_block(ValueId x) {
    auto y = conv_bn_relu(x, true);
    y = conv_bn_relu(y, false);
    y = b_.op("Add", {y, x}, {}, name("res"));
    return b_.op("Relu", {y}, {}, name("relu"));
  }

  ValueId layer_norm(ValueId t, int64_t s, int64_t d) {
    const Shape row = Shape::of({1, s, 1});
    std::vector<int64_t> last{-1};
    auto m = b_.op("ReduceMean", {t}, {{"axes", last}}, name("ln_mean"), row);
    auto dv = b_.op("Sub", {t, m}, {}, name("ln_sub"));
    auto sq = b_.op("Pow", {dv, scalar(2.f)}, {}, name("ln_pow"));
    auto var = b_.op("ReduceMean", {sq}, {{"axes", last}}, name("ln_var"), row);
    auto e = b_.op("Add", {var, scalar(1e-5f)}, {}, name("ln_eps"));
    auto sd = b_.op("Sqrt", {e}, {}, name("ln_sqrt"));
    auto n = b_.op("Div", {dv, sd}, {}, name("ln_div"));
    auto g = b_.op("Mul", {n, weight({d})}, {}, name("ln_gamma"));
    return b_.op("Add", {g, weight({d})}, {}, name("ln_beta"));
  }

  ValueId gelu(ValueId x) {
    auto a = b_.op("Div", {x, scalar(1.4142135f)}, {}, name("gelu_div"));
    a = b_.op("Erf", {a}, {}, name("gelu_erf"));
    a = b_.op("Add", {a, scalar(1.f)}, {}, name("gelu_add"));
    a = b_.op("Mul", {x, a}, {}, name("gelu_mul"));
    return b_.op("Mul", {a, scalar(0.5f)}, {}, name("gelu_half"));
  }

  ValueId transformer_block(ValueId x) {
    const int64_t c = o_.channels, hw = int64_t(o_.spatial) * o_.spatial;
    auto t =
        b_.op("Reshape", {x, b_.constant(name("shape"), TensorData::from_int64s({3}, {1, c, hw}))},
              {}, name("to_seq"), Shape::of({1, c, hw}));
    t = b_.op("Transpose", {t}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, name("tr"),
              Shape::of({1, hw, c}));
    auto n = layer_norm(t, hw, c);
    auto q = b_.op("MatMul", {n, weight({c, c})}, {}, name("q"));
    auto k = b_.op("MatMul", {n, weight({c, c})}, {}, name("k"));
    auto v = b_.op("MatMul", {n, weight({c, c})}, {}, name("v"));
    auto kt = b_.op("Transpose", {k}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, name("kt"),
                    Shape::of({1, c, hw}));
    auto s = b_.op("MatMul", {q, kt}, {}, name("scores"), Shape::of({1, hw, hw}));
    s = b_.op("Mul", {s, scalar(0.125f)}, {}, name("scale"));
    s = b_.op("Add", {s, weight({1, 1, hw})}, {}, name("mask"));
    s = b_.op("Softmax", {s}, {{"axis", int64_t{-1}}}, name("softmax"));
    auto a = b_.op("MatMul", {s, v}, {}, name("attn"), Shape::of({1, hw, c}));
    t = b_.op("Add", {a, t}, {}, name("res1"));
    auto f = b_.op("MatMul", {layer_norm(t, hw, c), weight({c, 4 * c})}, {}, name("fc1"),
                   Shape::of({1, hw, 4 * c}));
    f = gelu(b_.op("Add", {f, weight({4 * c})}, {}, name("fc1_bias")));
    f = b_.op("MatMul", {f, weight({4 * c, c})}, {}, name("fc2"), Shape::of({1, hw, c}));
    f = b_.op("Add", {f, weight({c})}, {}, name("fc2_bias"));
    t = b_.op("Add", {f, t}, {}, name("res2"));
    t = b_.op("Transpose", {t}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, name("tr_back"),
              Shape::of({1, c, hw}));
    return b_.op("Reshape",
                 {t, b_.constant(name("shape"),
                                 TensorData::from_int64s({4}, {1, c, o_.spatial, o_.spatial}))},
                 {}, name("to_map"), Shape::of({1, c, o_.spatial, o_.spatial}));
  }

  ValueId opaque(ValueId x) {
    auto y = b_.op("CustomNorm", {x}, {}, name("custom"));
    b_.graph().node(static_cast<NodeId>(b_.graph().node_count() - 1)).domain = "com.example";
    return y;
  }

  SyntheticGraphOptions o_;
  std::mt19937 rng_;
  GraphBuilder b_;
  int n_ = 0;
  std::map<std::vector<int64_t>, std::shared_ptr<TensorData>> weights_;
};

}  // namespace

Graph make_synthetic_graph(const SyntheticGraphOptions& options) {
  return Generator(options).run();
}

}  // namespace fx
