// SPDX-License-Identifier: Apache-2.0
#include "op_probes.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "ir/graph_builder.h"
#include "util/error.h"

namespace fxc {

fx::Tensor probe_ones(fx::DType t, const std::vector<int64_t>& dims) {
  fx::Tensor v(t, dims);
  if (t == fx::DType::String) {
    std::fill(v.data<std::string>(), v.data<std::string>() + v.numel(), "1");
    return v;
  }
  const std::size_t es = fx::dtype_size(t);
  unsigned char one[8] = {};
  switch (t) {
    case fx::DType::Float32: {
      const float f = 1;
      std::memcpy(one, &f, 4);
      break;
    }
    case fx::DType::Float64: {
      const double d = 1;
      std::memcpy(one, &d, 8);
      break;
    }
    case fx::DType::Float16: one[1] = 0x3c; break;
    case fx::DType::BFloat16:
      one[1] = 0x3f;
      one[0] = 0x80;
      break;
    default: one[0] = 1; break;  // little-endian integers and bool
  }
  for (int64_t i = 0; i < v.numel(); ++i)
    std::memcpy(static_cast<unsigned char*>(v.raw()) + i * es, one, es);
  return v;
}

namespace {

using fx::DType;
using fx::GraphBuilder;
using fx::ValueId;
using Dims = std::vector<int64_t>;

// Inputs of a probe graph: ones of the type under test, or constants with values.
class Probe {
 public:
  // A graph input of ones of type t.
  ValueId ones(DType t, const Dims& dims) {
    const std::string name = "x" + std::to_string(feeds_.size());
    feeds_[name] = probe_ones(t, dims);
    return b_.input(name, dims, t);
  }
  ValueId ints(const Dims& dims, const std::vector<int64_t>& values) {
    return b_.constant("c" + std::to_string(constants_++),
                       fx::TensorData::from_int64s(dims, values));
  }
  ValueId floats(const Dims& dims, const std::vector<float>& values) {
    return b_.constant("c" + std::to_string(constants_++),
                       fx::TensorData::from_floats(dims, values));
  }
  GraphBuilder& b() { return b_; }
  ProbeCase done(const std::vector<ValueId>& outputs) {
    for (ValueId v : outputs) b_.output(v);
    return {b_.build(), std::move(feeds_)};
  }
  ProbeCase done(ValueId out) { return done(std::vector<ValueId>{out}); }

 private:
  GraphBuilder b_;
  std::map<std::string, fx::Tensor> feeds_;
  int constants_ = 0;
};

// One operator on inputs made by `inputs`, with attributes; `outputs` outputs.
ProbeRecipe node(const std::string& op, std::function<std::vector<ValueId>(Probe&, DType)> inputs,
                 GraphBuilder::AttrList attrs = {}, int outputs = 1) {
  return [=](DType t) {
    Probe p;
    auto ins = inputs(p, t);
    return p.done(p.b().op_multi(op, ins, outputs, attrs));
  };
}

// An operator whose type under test is its output's (attribute output_datatype).
GraphBuilder::AttrList with_output_type(DType t, GraphBuilder::AttrList attrs = {}) {
  attrs.emplace_back("output_datatype", static_cast<int64_t>(t));
  return attrs;
}

// A subgraph that passes its inputs through (Identity each), named `name`.
fx::SubgraphRef identity_body(const std::string& name,
                              const std::vector<std::pair<DType, Dims>>& ins,
                              int passthrough_from = 0) {
  GraphBuilder g;
  std::vector<ValueId> vs;
  for (std::size_t i = 0; i < ins.size(); ++i)
    vs.push_back(g.input(name + "_in" + std::to_string(i), ins[i].second, ins[i].first));
  int count = 0;
  for (std::size_t i = static_cast<std::size_t>(passthrough_from); i < vs.size(); ++i, ++count)
    g.output(g.op("Identity", {vs[i]}));
  return fx::SubgraphRef{name, count, std::make_shared<const fx::Graph>(g.build())};
}

// A sequence of one or two tensors of ones.
ValueId sequence_of(Probe& p, DType t, int n) {
  std::vector<ValueId> items;
  for (int i = 0; i < n; ++i) items.push_back(p.ones(t, {2}));
  return p.b().op("SequenceConstruct", items);
}

// The first element of a sequence, as a tensor output.
ValueId first_of(Probe& p, ValueId seq) {
  return p.b().op("SequenceAt", {seq, p.ints({}, {0})});
}

std::map<std::string, ProbeRecipe> make_recipes() {
  std::map<std::string, ProbeRecipe> r;
  const DType f32 = DType::Float32, i64 = DType::Int64;
  // Data movement and shapes.
  r["Cast"] = node("Cast", [](Probe& p, DType t) { return std::vector{p.ones(t, {2})}; },
                   {{"to", static_cast<int64_t>(f32)}});
  r["Constant"] = [](DType t) {
    Probe p;
    return p.done(p.b().op("Constant", {}, {{"value", probe_ones(t, {2}).to_tensor_data()}}));
  };
  r["Reshape"] = node("Reshape", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {2, 2}), p.ints({2}, {1, 4})};
  });
  r["DepthToSpace"] = node("DepthToSpace",
                           [](Probe& p, DType t) {
                             return std::vector{p.ones(t, {1, 4, 1, 1})};
                           },
                           {{"blocksize", int64_t{2}}});
  r["SpaceToDepth"] = node("SpaceToDepth",
                           [](Probe& p, DType t) {
                             return std::vector{p.ones(t, {1, 1, 2, 2})};
                           },
                           {{"blocksize", int64_t{2}}});
  r["ReverseSequence"] = node("ReverseSequence", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {2, 2}), p.ints({2}, {1, 1})};
  });
  r["ScatterND"] = node("ScatterND", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {2, 2}), p.ints({1, 2}, {0, 0}), p.ones(t, {1})};
  });
  r["OneHot"] = node("OneHot", [](Probe& p, DType t) {
    return std::vector{p.ints({2}, {0, 1}), p.ints({}, {2}), p.ones(t, {2})};
  });
  r["CumSum"] = node("CumSum", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {2}), p.ints({}, {0})};
  });
  r["TopK"] = node(
      "TopK",
      [](Probe& p, DType t) {
        return std::vector{p.ones(t, {2}), p.ints({1}, {1})};
      },
      {}, 2);
  r["Einsum"] = node("Einsum",
                     [](Probe& p, DType t) {
                       return std::vector{p.ones(t, {2, 2})};
                     },
                     {{"equation", std::string("ij->ji")}});
  r["BitShift"] = node("BitShift",
                       [](Probe& p, DType t) {
                         return std::vector{p.ones(t, {2}), p.ones(t, {2})};
                       },
                       {{"direction", std::string("LEFT")}});
  // Images.
  r["BatchNormalization"] = node("BatchNormalization", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {1, 2, 2, 2}), p.ones(t, {2}), p.ones(t, {2}), p.ones(t, {2}),
                       p.ones(t, {2})};
  });
  for (const char* pool : {"AveragePool", "MaxPool", "LpPool"})
    r[pool] = node(pool,
                   [](Probe& p, DType t) {
                     return std::vector{p.ones(t, {1, 1, 2, 2})};
                   },
                   {{"kernel_shape", Dims{2, 2}}});
  r["MaxUnpool"] = node("MaxUnpool",
                        [](Probe& p, DType t) {
                          return std::vector{p.ones(t, {1, 1, 1, 1}), p.ints({1, 1, 1, 1}, {0})};
                        },
                        {{"kernel_shape", Dims{2, 2}}, {"strides", Dims{2, 2}}});
  r["LRN"] = node("LRN",
                  [](Probe& p, DType t) {
                    return std::vector{p.ones(t, {1, 1, 2, 2})};
                  },
                  {{"size", int64_t{1}}});
  r["RoiAlign"] = node("RoiAlign", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {1, 1, 2, 2}), p.ones(t, {1, 4}), p.ints({1}, {0})};
  });
  r["NonMaxSuppression"] = node("NonMaxSuppression", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {1, 1, 4}), p.ones(t, {1, 1, 1})};
  });
  // Recurrent: one direction, hidden size 1, one step of two features.
  auto recurrent = [](const char* op, int64_t gates) {
    return node(op,
                [gates](Probe& p, DType t) {
                  return std::vector{p.ones(t, {1, 1, 2}), p.ones(t, {1, gates, 2}),
                                     p.ones(t, {1, gates, 1})};
                },
                {{"hidden_size", int64_t{1}}});
  };
  r["RNN"] = recurrent("RNN", 1);
  r["GRU"] = recurrent("GRU", 3);
  r["LSTM"] = recurrent("LSTM", 4);
  // Quantization: the type under test is the quantized one (scales are float32).
  r["QuantizeLinear"] = node("QuantizeLinear", [](Probe& p, DType t) {
    return std::vector{p.floats({2}, {1, 2}), p.floats({}, {1}), p.ones(t, {})};
  });
  r["DequantizeLinear"] = node("DequantizeLinear", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {2}), p.floats({}, {1})};
  });
  r["DynamicQuantizeLinear"] = node(
      "DynamicQuantizeLinear", [](Probe& p, DType t) { return std::vector{p.ones(t, {2})}; }, {},
      3);
  r["QLinearConv"] = node("QLinearConv", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {1, 1, 2, 2}), p.floats({}, {1}), p.ones(t, {}),
                       p.ones(t, {1, 1, 1, 1}), p.floats({}, {1}), p.ones(t, {}),
                       p.floats({}, {1}),       p.ones(t, {})};
  });
  r["QLinearMatMul"] = node("QLinearMatMul", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {2, 2}), p.floats({}, {1}), p.ones(t, {}),     p.ones(t, {2, 2}),
                       p.floats({}, {1}), p.ones(t, {}),     p.floats({}, {1}), p.ones(t, {})};
  });
  // Signal: windows and the mel matrix make the type under test (output_datatype).
  for (const char* w : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    r[w] = [w](DType t) {
      Probe p;
      return p.done(p.b().op(w, {p.ints({}, {4})}, with_output_type(t)));
    };
  r["MelWeightMatrix"] = [](DType t) {
    Probe p;
    return p.done(p.b().op(
        "MelWeightMatrix",
        {p.ints({}, {1}), p.ints({}, {8}), p.ints({}, {16}), p.floats({}, {0}), p.floats({}, {8})},
        with_output_type(t)));
  };
  r["STFT"] = node("STFT", [](Probe& p, DType t) {
    return std::vector{p.ones(t, {1, 4, 1}), p.ints({}, {2}), fx::kNoValue, p.ints({}, {2})};
  });
  // Sequences and optionals: built from tensors of type t and read back as a tensor.
  r["SequenceConstruct"] = [](DType t) {
    Probe p;
    return p.done(first_of(p, sequence_of(p, t, 1)));
  };
  r["SequenceAt"] = r["SequenceConstruct"];
  r["SequenceLength"] = [](DType t) {
    Probe p;
    return p.done(p.b().op("SequenceLength", {sequence_of(p, t, 1)}));
  };
  r["SequenceEmpty"] = [](DType t) {
    Probe p;
    auto seq = p.b().op("SequenceEmpty", {}, {{"dtype", static_cast<int64_t>(t)}});
    return p.done(p.b().op("SequenceLength", {seq}));
  };
  r["SequenceErase"] = [](DType t) {
    Probe p;
    return p.done(first_of(p, p.b().op("SequenceErase", {sequence_of(p, t, 2)})));
  };
  r["SequenceInsert"] = [](DType t) {
    Probe p;
    auto seq = sequence_of(p, t, 1);
    return p.done(first_of(p, p.b().op("SequenceInsert", {seq, p.ones(t, {2})})));
  };
  r["ConcatFromSequence"] = [](DType t) {
    Probe p;
    return p.done(p.b().op("ConcatFromSequence", {sequence_of(p, t, 2)}, {{"axis", int64_t{0}}}));
  };
  r["SplitToSequence"] = [](DType t) {
    Probe p;
    return p.done(first_of(p, p.b().op("SplitToSequence", {p.ones(t, {2})})));
  };
  r["SequenceMap"] = [](DType t) {
    Probe p;
    auto seq = sequence_of(p, t, 1);
    auto mapped = p.b().op("SequenceMap", {seq}, {{"body", identity_body("map", {{t, {2}}})}});
    return p.done(first_of(p, mapped));
  };
  r["Optional"] = [](DType t) {
    Probe p;
    auto opt = p.b().op("Optional", {p.ones(t, {2})});
    return p.done(p.b().op("OptionalGetElement", {opt}));
  };
  // Control flow: the type under test flows through the body.
  r["If"] = [](DType t) {
    Probe p;
    auto cond = p.ones(DType::Bool, {});
    auto x = p.ones(t, {2});
    GraphBuilder::AttrList attrs;
    for (const char* branch : {"then_branch", "else_branch"}) {
      GraphBuilder g;
      fx::Value outer;
      outer.name = p.b().graph().value(x).name;
      outer.dtype = t;
      outer.shape = fx::Shape::of({2});
      const ValueId ref = g.graph().add_value(std::move(outer));
      g.graph().add_outer_ref(ref);
      g.output(g.op("Identity", {ref}));
      attrs.emplace_back(branch,
                         fx::SubgraphRef{branch, 1, std::make_shared<const fx::Graph>(g.build())});
    }
    auto y = p.b().op("If", {cond, x}, attrs, "if", fx::Shape::of({2}), t);
    p.b().graph().node(p.b().graph().find_node("if")).implicit_inputs = 1;
    return p.done(y);
  };
  r["Loop"] = [i64](DType t) {
    Probe p;
    auto trips = p.ints({}, {2});
    auto s0 = p.ones(t, {2});
    auto body = identity_body("body", {{i64, {}}, {DType::Bool, {}}, {t, {2}}}, 1);
    return p.done(p.b().op("Loop", {trips, fx::kNoValue, s0}, {{"body", body}}, "loop",
                           fx::Shape::of({2}), t));
  };
  r["Scan"] = [](DType t) {
    Probe p;
    auto s0 = p.ones(t, {2});
    auto xs = p.ones(t, {1, 2});
    auto body = identity_body("body", {{t, {2}}, {t, {2}}});
    return p.done(
        p.b().op_multi("Scan", {s0, xs}, 2, {{"body", body}, {"num_scan_inputs", int64_t{1}}}));
  };
  return r;
}

}  // namespace

const ProbeRecipe* find_probe_recipe(const std::string& op) {
  static const std::map<std::string, ProbeRecipe> recipes = make_recipes();
  auto it = recipes.find(op);
  return it == recipes.end() ? nullptr : &it->second;
}

}  // namespace fxc
