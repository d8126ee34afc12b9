// SPDX-License-Identifier: Apache-2.0
#include "profile/profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "ir/graph_builder.h"
#include "profile/chrome_trace.h"
#include "runtime/kernel_util.h"
#include "util/error.h"

namespace fx {
namespace {

constexpr int64_t kC = 16, kH = 64, kW = 64, kN = kC * kH * kW;

// x -> Relu -> Add(bias) -> Reshape (a view) -> Sigmoid
Graph small_graph() {
  GraphBuilder b;
  auto x = b.input("x", {1, kC, kH, kW});
  auto r = b.op("Relu", {x}, {}, "relu");
  auto bias =
      b.constant("bias", TensorData::from_floats({1, kC, 1, 1}, std::vector<float>(kC, 0.5f)));
  auto a = b.op("Add", {r, bias}, {}, "add");
  auto shape = b.constant("shape", TensorData::from_int64s({2}, {kC, kH * kW}));
  auto flat = b.op("Reshape", {a, shape}, {}, "reshape", Shape::of({kC, kH * kW}));
  b.output(b.op("Sigmoid", {flat}, {}, "sigmoid"));
  return b.build();
}

ProfileOptions options(int runs, int warmup) {
  ProfileOptions o;
  o.runs = runs;
  o.warmup = warmup;
  o.threads = 1;
  o.seed = 7;
  return o;
}

// A Conv step whose kernel holds its weights (it is given x alone): its FLOPs still
// come out, from the graph's shapes, not 0 because the weight tensor is not among the
// step's inputs.
class BakedWeightsConv final : public Kernel {
 public:
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    Tensor& y = ctx.output(0, DType::Float32, {x.dims()[0], 8, x.dims()[2], x.dims()[3]});
    std::fill(y.data<float>(), y.data<float>() + y.numel(), 0.f);
  }
};

TEST(Profiler, StepWithBakedWeightsCountsItsNodesFlops) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 10, 10});
  auto w = b.constant("w", TensorData::from_floats({8, 4, 3, 3}, std::vector<float>(288, 0.1f)));
  b.output(b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv",
                Shape::of({1, 8, 10, 10})));
  Graph g = b.build();
  Step s;
  s.name = "conv";
  s.op_type = "Conv";
  s.nodes = {g.find_node("conv")};
  s.inputs = {x};
  s.outputs = {g.node(g.find_node("conv")).outputs[0]};
  s.kernel = std::make_shared<BakedWeightsConv>();
  ProfileResult r = Profiler(options(1, 0)).profile(g, {s});
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].flops, int64_t{2} * 8 * 10 * 10 * 4 * 3 * 3);
}

TEST(Profiler, OneEventPerStepPerRunWithPositiveDurations) {
  Graph g = small_graph();
  ProfileResult r = Profiler(options(5, 1)).profile(g);
  EXPECT_EQ(r.runs, 5);
  EXPECT_EQ(r.threads, 1);
  ASSERT_EQ(r.run_ms.size(), 5u);
  EXPECT_EQ(r.timeline.run_count(), 5);
  ASSERT_EQ(r.timeline.events.size(), 4u * 5u);
  for (int run = 0; run < 5; ++run) {
    Timeline one = r.timeline.single_run(run);
    ASSERT_EQ(one.events.size(), 4u);
    EXPECT_EQ(one.events[0].name, "relu");
    EXPECT_EQ(one.events[3].name, "sigmoid");
    for (const auto& e : one.events) {
      EXPECT_GT(e.duration_us, 0) << e.name;
      EXPECT_GE(e.start_us, 0);
    }
    // Steps run one after another.
    for (std::size_t i = 1; i < one.events.size(); ++i)
      EXPECT_GE(one.events[i].start_us, one.events[i - 1].end_us());
    // A run's kernels fit in the run's wall time.
    EXPECT_LE(one.kernel_time_us(0), r.run_ms[static_cast<std::size_t>(run)] * 1e3 + 1e-6);
  }
  EXPECT_GT(r.median_ms, 0);
  EXPECT_EQ(r.kernels.size(), 4u);
  EXPECT_NE(r.device.find("1 thread"), std::string::npos);
  EXPECT_EQ(r.representative_timeline().events.size(), 4u);
}

TEST(Profiler, BytesAndFlopsComeFromTheActualTensors) {
  Graph g = small_graph();
  ProfileResult r = Profiler(options(2, 0)).profile(g);
  Timeline run0 = r.timeline.single_run(0);
  const KernelEvent& relu = run0.events[0];
  EXPECT_EQ(relu.op_types, std::vector<std::string>{"Relu"});
  EXPECT_EQ(relu.nodes, std::vector<std::string>{"relu"});
  EXPECT_EQ(relu.bytes_read, kN * 4);
  EXPECT_EQ(relu.bytes_written, kN * 4);
  EXPECT_EQ(relu.flops, kN);
  EXPECT_EQ(relu.args.at("inputs"), "float32[1,16,64,64]");
  const KernelEvent& add = run0.events[1];
  EXPECT_EQ(add.bytes_read, kN * 4 + kC * 4);  // activation + bias
  const KernelEvent& sigmoid = run0.events[3];
  EXPECT_EQ(sigmoid.args.at("outputs"), "float32[16,4096]");
  // Peak arena: at least one full activation, and reuse never makes it bigger than
  // all intermediates together.
  EXPECT_GE(r.peak_activation_bytes, kN * 4);
  EXPECT_LE(r.peak_activation_bytes, r.total_activation_bytes);
}

TEST(Profiler, OutputsAreComputedFromTheSeededInputs) {
  Graph g = small_graph();
  ProfileResult a = Profiler(options(1, 0)).profile(g);
  ASSERT_EQ(a.outputs.size(), 1u);
  auto x = a.inputs.at("x").to_floats();
  auto y = a.outputs[0].to_floats();
  ASSERT_EQ(y.size(), static_cast<std::size_t>(kN));
  for (std::size_t i = 0; i < y.size(); i += 997) {
    float expect = 1.0f / (1.0f + std::exp(-(std::max(x[i], 0.0f) + 0.5f)));
    EXPECT_NEAR(y[i], expect, 1e-5f) << i;
  }
  // Same seed, same inputs; given inputs are used as they are.
  ProfileResult b = Profiler(options(1, 0)).profile(g);
  EXPECT_EQ(b.inputs.at("x").to_floats(), x);
  ProfileResult c = Profiler(options(1, 0)).profile(g, make_steps(g), a.inputs);
  EXPECT_EQ(c.outputs[0].to_floats(), y);
}

// A fused step (Relu+Add as one kernel) with a group index: its events carry the
// index and name the group in their args, also through a Chrome trace and back.
TEST(Profiler, FusedStepsNameTheirGroup) {
  Graph g = small_graph();
  std::vector<Step> steps = make_steps(g);
  ASSERT_EQ(steps.size(), 4u);
  Step fused;
  fused.name = "fg-test";
  fused.op_type = "Relu+Add";
  fused.nodes = {steps[0].nodes[0], steps[1].nodes[0]};
  fused.inputs = steps[0].inputs;
  fused.inputs.push_back(steps[1].inputs[1]);
  fused.outputs = steps[1].outputs;
  fused.group_id = 3;
  fused.kernel = fn_kernel([](KernelContext& ctx) {
    const Tensor& x = ctx.in(0);
    const float* b = ctx.in(1).data<float>();
    Tensor& y = ctx.output(0, DType::Float32, x.dims());
    const float* xv = x.data<float>();
    float* yv = y.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) yv[i] = std::max(xv[i], 0.0f) + b[i / (kH * kW)];
  });
  substitute_step(steps, std::move(fused));
  ProfileResult r = Profiler(options(2, 0)).profile(g, std::move(steps));
  Timeline run0 = r.timeline.single_run(0);
  ASSERT_EQ(run0.events.size(), 3u);
  const KernelEvent& f = run0.events[0];
  EXPECT_EQ(f.name, "fg-test");
  EXPECT_EQ(f.op_types, (std::vector<std::string>{"Relu", "Add"}));
  ASSERT_TRUE(f.group_id.has_value());
  EXPECT_EQ(*f.group_id, 3);
  EXPECT_EQ(f.args.at("group"), "fg-test");
  // Unfused steps have neither.
  EXPECT_FALSE(run0.events[1].group_id.has_value());
  EXPECT_EQ(run0.events[1].args.count("group"), 0u);
  auto fused_row = std::find_if(r.kernels.begin(), r.kernels.end(),
                                [](const KernelStats& k) { return k.name == "fg-test"; });
  ASSERT_NE(fused_row, r.kernels.end());
  EXPECT_EQ(fused_row->group_id, std::optional<int>(3));
  // The Chrome trace keeps both.
  Timeline back = parse_trace(to_chrome_trace(run0), "test");
  auto it = std::find_if(back.events.begin(), back.events.end(),
                         [](const KernelEvent& e) { return e.name == "fg-test"; });
  ASSERT_NE(it, back.events.end());
  EXPECT_EQ(it->group_id, std::optional<int>(3));
  EXPECT_EQ(it->args.at("group"), "fg-test");
}

TEST(Profiler, RejectsZeroRuns) {
  Graph g = small_graph();
  EXPECT_THROW(Profiler(options(0, 0)).profile(g), Error);
}

}  // namespace
}  // namespace fx
