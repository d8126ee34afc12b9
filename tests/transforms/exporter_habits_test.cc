// SPDX-License-Identifier: Apache-2.0
// Exporter habits as tests: one small network written the ways exporters write it
// (weights through Identity, weights in Constant nodes, initializers listed as inputs,
// shapes computed at run time, dynamic batch / spatial / sequence dims, opsets 11 to
// 17), loaded as the commands load it. Each states the canonical node count and the
// groups the analysis must find; every variant of a network must give its plain
// export's canonical graph and groups.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "analysis/fusion_finder.h"
#include "device/device_presets.h"
#include "onnx/model_factory.h"
#include "onnx/model_loader.h"

namespace fx::transforms {
namespace {

using fx::testing::add_float_io;
using fx::testing::add_initializer;
using fx::testing::add_node;
using fx::testing::TempDir;

struct Habits {
  bool identity_weights = false;  // PyTorch: shared/equal parameters, no constant folding
  bool constant_weights = false;  // paddle2onnx / tf2onnx: weights in Constant nodes
  bool initializers_as_inputs = false;
  bool runtime_shapes = false;          // x.view(n, -1) as Shape -> Gather -> Unsqueeze -> Concat
  std::vector<std::string> input_dims;  // dim_params of the input ("" = static)
  int opset = 13;
  int64_t size = 16;       // input height and width when static
  bool bn_folded = false;  // the exporter folded BatchNormalization into the Conv

  Habits& identity(bool on = true) { return identity_weights = on, *this; }
  Habits& constants() { return constant_weights = true, *this; }
  Habits& inputs() { return initializers_as_inputs = true, *this; }
  Habits& shapes() { return runtime_shapes = true, *this; }
  Habits& dims(std::vector<std::string> d) { return input_dims = std::move(d), *this; }
  Habits& at(int o) { return opset = o, *this; }
  Habits& hw(int64_t s) { return size = s, *this; }
  Habits& folded() { return bn_folded = true, *this; }
};

// Puts a weight in the graph the way the habit says and returns the name to read.
std::string weight(onnx::GraphProto* g, const Habits& h, const std::string& name,
                   const std::vector<int64_t>& dims) {
  if (h.constant_weights) {
    onnx::GraphProto scratch;
    onnx::TensorProto* t = add_initializer(&scratch, name, dims);
    auto* n = add_node(g, "Constant", name + "_Constant", {}, {name});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = *t;
    return name;
  }
  add_initializer(g, name, dims);
  if (h.initializers_as_inputs) add_float_io(g->add_input(), name, dims);
  if (!h.identity_weights) return name;
  add_node(g, "Identity", name + "_Identity", {name}, {name + ".identity"});
  return name + ".identity";
}

void int64_initializer(onnx::GraphProto* g, const std::string& name,
                       const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (auto x : v) t->add_int64_data(x);
}

void unsqueeze(onnx::GraphProto* g, const Habits& h, const std::string& name, const std::string& in,
               const std::string& out) {
  if (h.opset >= 13) {
    int64_initializer(g, name + "_axes", {1}, {0});
    add_node(g, "Unsqueeze", name, {in, name + "_axes"}, {out});
  } else {
    auto* n = add_node(g, "Unsqueeze", name, {in}, {out});
    auto* a = n->add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(0);
  }
}

onnx::ModelProto new_model(const Habits& h) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("fx-tests");
  m.add_opset_import()->set_version(h.opset);
  return m;
}

// A BatchNormalization after a Conv, or (bn_folded) the Conv's bias and a rename: the
// exporter's folding, whose weights differ but not their sizes.
void batch_norm(onnx::GraphProto* g, const Habits& h, const std::string& name,
                const std::string& in, const std::string& out, int64_t c) {
  if (h.bn_folded) {
    for (auto& n : *g->mutable_node())
      if (n.output(0) == in) {
        n.add_input(weight(g, h, n.name() + ".bias", {c}));
        n.set_output(0, out);
      }
    return;
  }
  std::vector<std::string> ins = {in};
  for (const char* p : {"scale", "bias", "mean", "var"})
    ins.push_back(weight(g, h, name + "." + p, {c}));
  add_node(g, "BatchNormalization", name, ins, {out});
}

// conv1 -> bn1 -> relu1 -> conv2 -> bn2 -> add(relu1) -> relu2 -> gap -> reshape -> fc:
// eight nodes in canonical form (each BN folded into its Conv; the reshape's target a
// constant, or computed at run time).
onnx::ModelProto resnet_block(const Habits& h) {
  onnx::ModelProto m = new_model(h);
  auto* g = m.mutable_graph();
  g->set_name("block");
  add_float_io(g->add_input(), "x", {1, 3, h.size, h.size}, h.input_dims);
  add_float_io(g->add_output(), "y", {1, 10}, {h.input_dims.empty() ? "" : h.input_dims[0]});
  add_node(g, "Conv", "/conv1/Conv", {"x", weight(g, h, "conv1.w", {8, 3, 3, 3})}, {"c1"})
      ->add_attribute()
      ->CopyFrom([] {
        onnx::AttributeProto a;
        a.set_name("pads");
        a.set_type(onnx::AttributeProto::INTS);
        for (int i = 0; i < 4; ++i) a.add_ints(1);
        return a;
      }());
  batch_norm(g, h, "/bn1/BatchNormalization", "c1", "b1", 8);
  add_node(g, "Relu", "/relu1/Relu", {"b1"}, {"r1"});
  auto* c2 =
      add_node(g, "Conv", "/conv2/Conv", {"r1", weight(g, h, "conv2.w", {8, 8, 3, 3})}, {"c2"});
  auto* pads = c2->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  batch_norm(g, h, "/bn2/BatchNormalization", "c2", "b2", 8);
  add_node(g, "Add", "/add/Add", {"b2", "r1"}, {"a"});
  add_node(g, "Relu", "/relu2/Relu", {"a"}, {"r2"});
  add_node(g, "GlobalAveragePool", "/gap/GlobalAveragePool", {"r2"}, {"p"});
  if (h.runtime_shapes) {
    add_node(g, "Shape", "/flatten/Shape", {"p"}, {"p_shape"});
    int64_initializer(g, "zero", {}, {0});
    add_node(g, "Gather", "/flatten/Gather", {"p_shape", "zero"}, {"p_n"});
    unsqueeze(g, h, "/flatten/Unsqueeze", "p_n", "p_n1");
    int64_initializer(g, "minus1", {1}, {-1});
    auto* cat = add_node(g, "Concat", "/flatten/Concat", {"p_n1", "minus1"}, {"p_to"});
    auto* axis = cat->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
  } else {
    int64_initializer(g, "p_to", {2}, {1, -1});
  }
  add_node(g, "Reshape", "/flatten/Reshape", {"p", "p_to"}, {"f"});
  auto* fc = add_node(g, "Gemm", "/fc/Gemm",
                      {"f", weight(g, h, "fc.w", {10, 8}), weight(g, h, "fc.b", {10})}, {"y"});
  auto* tb = fc->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  return m;
}

// x[batch, seq, 16] -> LayerNorm -> MatMul -> Add -> Relu -> MatMul -> Add -> + x: the
// LayerNorm decomposed (ReduceMean ... Add) below opset 17, one LayerNormalization at 17.
onnx::ModelProto encoder_block(const Habits& h) {
  onnx::ModelProto m = new_model(h);
  auto* g = m.mutable_graph();
  g->set_name("encoder");
  add_float_io(g->add_input(), "x", {1, 8, 16}, h.input_dims);
  add_float_io(g->add_output(), "y", {1, 8, 16}, h.input_dims);
  const std::string gamma = weight(g, h, "ln.gamma", {16}), beta = weight(g, h, "ln.beta", {16});
  auto axes = [](onnx::NodeProto* n) {
    auto* a = n->add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(-1);
  };
  if (h.opset >= 17) {
    add_node(g, "LayerNormalization", "/ln/LayerNormalization", {"x", gamma, beta}, {"ln"});
  } else {
    axes(add_node(g, "ReduceMean", "/ln/ReduceMean", {"x"}, {"mu"}));
    add_node(g, "Sub", "/ln/Sub", {"x", "mu"}, {"d"});
    auto* two = g->add_initializer();
    two->set_name("two");
    two->set_data_type(onnx::TensorProto::FLOAT);
    two->add_float_data(2.f);
    add_node(g, "Pow", "/ln/Pow", {"d", "two"}, {"d2"});
    axes(add_node(g, "ReduceMean", "/ln/ReduceMean_1", {"d2"}, {"var"}));
    auto* eps = g->add_initializer();
    eps->set_name("eps");
    eps->set_data_type(onnx::TensorProto::FLOAT);
    eps->add_float_data(1e-5f);
    add_node(g, "Add", "/ln/Add", {"var", "eps"}, {"ve"});
    add_node(g, "Sqrt", "/ln/Sqrt", {"ve"}, {"sd"});
    add_node(g, "Div", "/ln/Div", {"d", "sd"}, {"n"});
    add_node(g, "Mul", "/ln/Mul", {"n", gamma}, {"ng"});
    add_node(g, "Add", "/ln/Add_1", {"ng", beta}, {"ln"});
  }
  add_node(g, "MatMul", "/fc1/MatMul", {"ln", weight(g, h, "fc1.w", {16, 32})}, {"h1"});
  add_node(g, "Add", "/fc1/Add", {"h1", weight(g, h, "fc1.b", {32})}, {"h2"});
  add_node(g, "Relu", "/act/Relu", {"h2"}, {"h3"});
  add_node(g, "MatMul", "/fc2/MatMul", {"h3", weight(g, h, "fc2.w", {32, 16})}, {"h4"});
  add_node(g, "Add", "/fc2/Add", {"h4", weight(g, h, "fc2.b", {16})}, {"h5"});
  add_node(g, "Add", "/residual/Add", {"h5", "x"}, {"y"});
  return m;
}

struct Seen {
  LoadedModel model;
  std::vector<std::set<std::string>> groups;  // member names of each group
};

// As the commands load it; `fold_bn` false as with --disable-pass conv-bn-folding.
Seen load_and_analyse(const onnx::ModelProto& proto, bool fold_bn = true, int opt_level = 2) {
  TempDir dir;
  fx::testing::save(proto, dir.file("m.onnx"));
  LoadOptions lo = command_load_options({}, {}, false);
  if (!fold_bn) lo.canonical.disabled.insert("conv-bn-folding");
  Seen s{load_onnx(dir.file("m.onnx"), lo), {}};
  FusionOptions fo;
  fo.opt_level = opt_level;
  for (const auto& gr : analyze_fusion(s.model.graph, preset_nvidia_h100(), fo).groups)
    s.groups.emplace_back(gr.nodes.begin(), gr.nodes.end());
  std::sort(s.groups.begin(), s.groups.end());
  return s;
}

bool has_group_with(const Seen& s, std::initializer_list<const char*> nodes) {
  for (const auto& g : s.groups) {
    bool all = true;
    for (const char* n : nodes) all = all && g.count(n);
    if (all) return true;
  }
  return false;
}

TEST(ExporterHabits, ResNetBlockExportedEveryWayIsOneCanonicalGraph) {
  const Seen plain = load_and_analyse(resnet_block({}));
  EXPECT_EQ(plain.model.canonical.nodes_before, 10);
  // With conv-bn-folding disabled the BNs stay (the analysis folds each into its Conv
  // inside a group).
  const Seen kept = load_and_analyse(resnet_block({}), /*fold_bn=*/false);
  EXPECT_EQ(kept.model.graph.node_count(), 10u);
  EXPECT_TRUE(has_group_with(kept, {"/conv1/Conv", "/bn1/BatchNormalization", "/relu1/Relu"}));
  // Dynamic spatial dims are assumed 224: their reference is the static export at 224
  // (the groups depend on the sizes, as they should).
  const Seen plain224 = load_and_analyse(resnet_block(Habits().hw(224)));
  EXPECT_EQ(plain224.model.graph.node_count(), 8u);
  EXPECT_EQ(plain.model.graph.node_count(), 8u);
  EXPECT_TRUE(plain.model.assumed_dims.empty());
  // The BNs are folded by default, and the record says into which Conv.
  const PassRecord* bn_pass = nullptr;
  for (const auto& p : plain.model.canonical.passes)
    if (p.pass == "conv-bn-folding") bn_pass = &p;
  ASSERT_NE(bn_pass, nullptr);
  EXPECT_EQ(bn_pass->folded_into,
            (std::map<std::string, std::string>{{"/bn1/BatchNormalization", "/conv1/Conv"},
                                                {"/bn2/BatchNormalization", "/conv2/Conv"}}));
  // The analysis must fuse each Conv with what follows it.
  EXPECT_TRUE(has_group_with(plain, {"/conv1/Conv", "/relu1/Relu"}));
  EXPECT_TRUE(has_group_with(plain, {"/conv2/Conv", "/add/Add"}));

  struct Variant {
    const char* name;
    Habits habits;
    std::size_t raw_nodes;  // as imported, before canonicalization
    const Seen* reference = nullptr;
  };
  const std::vector<Variant> variants = {
      {"BN folded by the exporter", Habits().folded(), 8},
      {"BN folded, weights through Identity", Habits().folded().identity(), 8 + 6},
      {"identity on weights", Habits().identity(), 10 + 12},
      {"constant-node weights", Habits().constants(), 10 + 12},
      {"initializers as inputs", Habits().inputs(), 10},
      {"runtime shapes", Habits().shapes(), 14},
      {"dynamic batch", Habits().dims({"batch", "", "", ""}), 10},
      {"dynamic batch and spatial", Habits().dims({"N", "", "height", "width"}), 10, &plain224},
      {"unnamed dims", Habits().shapes().dims({"unk__0", "", "unk__1", "unk__2"}), 14, &plain224},
      {"opset 11", Habits().shapes().at(11), 14},
      {"opset 17", Habits().identity().at(17), 22},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.name);
    const Seen s = load_and_analyse(resnet_block(v.habits));
    EXPECT_EQ(s.model.canonical.nodes_before, int(v.raw_nodes));
    EXPECT_EQ(s.model.graph.node_count(), 8u);
    const Seen& ref = v.reference ? *v.reference : plain;
    EXPECT_EQ(s.groups, ref.groups);
    EXPECT_EQ(s.model.graph.parameter_bytes(), ref.model.graph.parameter_bytes());
  }
}

// BatchNormalizations the canonical pass cannot fold stay, and the analysis still
// serves them: after a Conv whose weights arrive at run time (conv_bn_act folds only
// the BN's own constants), and after an Add (no Conv to fold into).
TEST(ExporterHabits, BatchNormTheCanonicalFormCannotFoldIsStillGrouped) {
  onnx::ModelProto m = new_model(Habits());
  auto* g = m.mutable_graph();
  add_float_io(g->add_input(), "x", {1, 8, 16, 16});
  add_float_io(g->add_input(), "w", {8, 8, 1, 1});  // weights given at run time
  add_float_io(g->add_output(), "y", {1, 8, 16, 16});
  add_node(g, "Conv", "/conv/Conv", {"x", "w"}, {"c"});
  batch_norm(g, Habits(), "/bn/BatchNormalization", "c", "b", 8);
  add_node(g, "Relu", "/relu/Relu", {"b"}, {"r"});
  add_node(g, "Add", "/add/Add", {"r", "x"}, {"a"});
  batch_norm(g, Habits(), "/bn_after_add/BatchNormalization", "a", "b2", 8);
  add_node(g, "Relu", "/relu2/Relu", {"b2"}, {"y"});
  const Seen s = load_and_analyse(m);
  EXPECT_EQ(s.model.graph.node_count(), 6u);  // nothing folded
  EXPECT_TRUE(has_group_with(s, {"/conv/Conv", "/bn/BatchNormalization", "/relu/Relu"}));
  EXPECT_TRUE(has_group_with(s, {"/bn_after_add/BatchNormalization", "/relu2/Relu"}));
}

TEST(ExporterHabits, DynamicDimsAreAssumedSoTheAnalysisFindsGroups) {
  const Seen s = load_and_analyse(resnet_block(Habits().dims({"batch", "", "height", "width"})));
  ASSERT_EQ(s.model.assumed_dims.size(), 3u);
  EXPECT_EQ(s.model.assumed_dims[0].value, 1);
  EXPECT_EQ(s.model.assumed_dims[1].value, 224);
  EXPECT_EQ(s.model.graph.value(s.model.graph.find_value("r2")).shape, Shape::of({1, 8, 224, 224}));
  EXPECT_FALSE(s.groups.empty());
}

TEST(ExporterHabits, WithoutCanonicalizationTheHabitsHideTheGroups) {
  TempDir dir;
  fx::testing::save(resnet_block(Habits().identity()), dir.file("m.onnx"));
  LoadedModel raw = load_onnx(dir.file("m.onnx"), command_load_options({}, {}, true));
  EXPECT_EQ(raw.graph.node_count(), 22u);
  FusionOptions fo;
  fo.opt_level = 1;
  bool conv_bn = false;
  for (const auto& gr : analyze_fusion(raw.graph, preset_nvidia_h100(), fo).groups)
    conv_bn = conv_bn || (std::count(gr.ops.begin(), gr.ops.end(), "BatchNormalization") &&
                          std::count(gr.ops.begin(), gr.ops.end(), "Conv"));
  // The reason for the canonical form: with weights behind Identity, BN cannot fold.
  EXPECT_FALSE(conv_bn);
}

TEST(ExporterHabits, EncoderBlockAcrossOpsets) {
  // Opsets 11 to 16 decompose LayerNorm into nine nodes; 17 has LayerNormalization.
  for (int opset : {11, 13, 14, 15, 16, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    for (bool identity : {false, true}) {
      const Seen s = load_and_analyse(
          encoder_block(Habits().identity(identity).dims({"batch", "seq", ""}).at(opset)));
      EXPECT_EQ(s.model.graph.node_count(), opset >= 17 ? 7u : 15u);
      ASSERT_EQ(s.model.assumed_dims.size(), 2u);
      EXPECT_EQ(s.model.assumed_dims[1].symbol, "seq");
      EXPECT_EQ(s.model.assumed_dims[1].value, 128);
      // The MLP's bias and activation join the first MatMul; the LayerNorm is one group.
      EXPECT_TRUE(has_group_with(s, {"/fc1/MatMul", "/fc1/Add", "/act/Relu"}));
      if (opset >= 17) {
        EXPECT_TRUE(has_group_with(s, {"/ln/LayerNormalization"}));
      } else {
        EXPECT_TRUE(has_group_with(s, {"/ln/ReduceMean", "/ln/Sub", "/ln/Div", "/ln/Add_1"}));
      }
    }
  }
}

}  // namespace
}  // namespace fx::transforms
