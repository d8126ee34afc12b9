#include "profile/profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ir/graph_builder.h"
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

TEST(Profiler, RejectsZeroRuns) {
  Graph g = small_graph();
  EXPECT_THROW(Profiler(options(0, 0)).profile(g), Error);
}

}  // namespace
}  // namespace fx
