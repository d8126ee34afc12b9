// SPDX-License-Identifier: Apache-2.0
// A fused program without an accepted group is the unfused program: the same steps in
// the same order over the same values, no step marked as a group's, and the same
// outputs bit for bit, run after run. What `fxc codegen --bench` compares as "fused"
// on a model where no group pays (a recurrent model, a control-flow test) must differ
// from "unfused" by nothing but the run.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "codegen/fused_program.h"
#include "ir/graph_builder.h"
#include "runtime/executor.h"

namespace fx {
namespace {

std::vector<float> seeded(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// x [seq, 1, 8] -> LSTM (32 units, constant weights) -> Y_h -> MatMul -> Add -> Relu,
// the shape of the corpus's recurrent classifiers.
Graph recurrent_classifier(int64_t seq) {
  constexpr int64_t kIn = 8, kHidden = 32, kOut = 4;
  GraphBuilder b;
  const ValueId x = b.input("x", {seq, 1, kIn});
  const ValueId w =
      b.constant("w", TensorData::from_floats({1, 4 * kHidden, kIn}, seeded(4 * kHidden * kIn, 1)));
  const ValueId r = b.constant(
      "r", TensorData::from_floats({1, 4 * kHidden, kHidden}, seeded(4 * kHidden * kHidden, 2)));
  const ValueId bias =
      b.constant("b", TensorData::from_floats({1, 8 * kHidden}, seeded(8 * kHidden, 3)));
  const auto lstm = b.op_multi("LSTM", {x, w, r, bias}, 3, {{"hidden_size", kHidden}}, "lstm");
  const ValueId fc =
      b.constant("fc", TensorData::from_floats({kHidden, kOut}, seeded(kHidden * kOut, 4)));
  const ValueId fb = b.constant("fb", TensorData::from_floats({kOut}, seeded(kOut, 5)));
  const auto mm = b.op_multi("MatMul", {lstm[1], fc}, 1, {}, "fc");
  const auto add = b.op_multi("Add", {mm[0], fb}, 1, {}, "fc_bias");
  const auto relu = b.op_multi("Relu", {add[0]}, 1, {}, "relu");
  b.output(relu[0]);
  b.output(lstm[2]);
  return b.build();
}

TEST(NoGroupProgram, HasTheUnfusedStepsAndOutputs) {
  const int64_t seq = 12;
  const Graph g = recurrent_classifier(seq);
  const FusedProgram p = build_fused_program(g, std::vector<const FusionGroup*>{}, {});
  EXPECT_TRUE(p.groups.empty());
  ExecutorOptions eo;
  eo.threads = 2;
  Executor unfused(g, eo), fused(g, p.steps, eo);
  ASSERT_EQ(fused.steps().size(), unfused.steps().size());
  for (std::size_t i = 0; i < unfused.steps().size(); ++i) {
    const Step& a = unfused.steps()[i];
    const Step& b = fused.steps()[i];
    SCOPED_TRACE("step " + std::to_string(i) + " " + a.name);
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.op_type, a.op_type);
    EXPECT_EQ(b.nodes, a.nodes);
    EXPECT_EQ(b.inputs, a.inputs);
    EXPECT_EQ(b.outputs, a.outputs);
    EXPECT_FALSE(b.group_id.has_value());
  }
  EXPECT_EQ(fused.slot_count(), unfused.slot_count());
  for (uint32_t seed : {7u, 8u, 7u}) {
    const std::map<std::string, Tensor> in = {
        {"x", Tensor::from_floats({seq, 1, 8}, seeded(static_cast<std::size_t>(seq * 8), seed))}};
    const auto want = unfused.run(in);
    const auto got = fused.run(in);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t o = 0; o < want.size(); ++o) {
      ASSERT_EQ(got[o].dims(), want[o].dims());
      EXPECT_EQ(std::memcmp(got[o].raw(), want[o].raw(), want[o].byte_size()), 0)
          << "output " << o << " differs";
    }
  }
}

}  // namespace
}  // namespace fx
