// SPDX-License-Identifier: Apache-2.0
#include "runtime/executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>

#include "ir/graph_builder.h"
#include "runtime/kernel_util.h"
#include "util/error.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

TEST(Executor, UnsupportedOpNamesOpAndNode) {
  GraphBuilder b;
  ValueId x = b.input("x", {2});
  b.output(b.op("FancyOp", {x}, {}, "my_fancy_node"));
  Graph g = b.build();
  try {
    Executor ex(g);
    FAIL() << "expected fx::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("FancyOp"));
    EXPECT_THAT(e.what(), HasSubstr("my_fancy_node"));
  }
}

TEST(Executor, MissingInputAndKernelErrorsNameTheStep) {
  GraphBuilder b;
  ValueId x = b.input("x", {2});
  ValueId y = b.input("y", {3});
  b.output(b.op("Add", {x, y}, {}, "the_add"));
  Graph g = b.build();
  Executor ex(g);
  EXPECT_THROW(ex.run({{"x", Tensor::from_floats({2}, {1, 2})}}), Error);
  try {
    ex.run({{"x", Tensor::from_floats({2}, {1, 2})}, {"y", Tensor::from_floats({3}, {1, 2, 3})}});
    FAIL() << "expected a broadcast error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the_add"));
  }
}

// A kernel that records the threads it was given and the team of an OpenMP region.
struct ThreadProbe final : Kernel {
  int ctx_threads = 0, team = 0;
  void run(KernelContext& ctx) override {
    ctx_threads = ctx.threads();
#pragma omp parallel
    {
#pragma omp single
      team = omp_get_num_threads();
    }
    const Tensor& x = ctx.in(0);
    ctx.alias_output(0, x, x.dims());
  }
  bool aliases_input() const override {
    return true;
  }
};

TEST(Executor, ThreadCountIsRespectedAndRestored) {
  GraphBuilder b;
  ValueId x = b.input("x", {2});
  b.output(b.op("Identity", {x}));
  Graph g = b.build();
  for (int threads : {1, 3}) {
    auto probe = std::make_shared<ThreadProbe>();
    auto steps = make_steps(g);
    Step s = steps[0];
    s.kernel = probe;
    substitute_step(steps, s);
    int before = omp_get_max_threads();
    Executor ex(g, steps, ExecutorOptions{threads});
    ex.run({{"x", Tensor::from_floats({2}, {1, 2})}});
    EXPECT_EQ(probe->ctx_threads, threads);
    // OpenMP regions (oneDNN's) run on the calling thread alone: the threads are the
    // pool's, and a second OpenMP team would spin beside them.
    EXPECT_EQ(probe->team, 1);
    EXPECT_EQ(omp_get_max_threads(), before);
  }
}

TEST(Executor, ObserverSeesEveryStepInOrder) {
  GraphBuilder b;
  ValueId v = b.input("x", {64});
  for (int i = 0; i < 4; ++i) v = b.op("Relu", {v});
  b.output(v);
  Graph g = b.build();
  Executor ex(g, ExecutorOptions{1});
  std::vector<StepEvent> events;
  ex.set_step_observer([&](const StepEvent& e) { events.push_back(e); });
  ex.run({{"x", Tensor(DType::Float32, {64})}});
  ASSERT_EQ(events.size(), 4u);
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].step, static_cast<int>(i));
    EXPECT_LE(events[i].start_ns, events[i].end_ns);
    if (i) {
      EXPECT_GE(events[i].start_ns, events[i - 1].end_ns);
    }
    ASSERT_EQ(events[i].outputs.size(), 1u);
    EXPECT_EQ(events[i].outputs[0]->numel(), 64);
  }
}

TEST(Executor, FusedStepReplacesANodeGroup) {
  // y = Neg(Relu(x)) computed by one step standing for both nodes.
  GraphBuilder b;
  ValueId x = b.input("x", {3});
  ValueId r = b.op("Relu", {x}, {}, "relu");
  ValueId y = b.op("Neg", {r}, {}, "neg");
  b.output(y);
  Graph g = b.build();
  auto steps = make_steps(g);
  Step fused{"relu_neg",
             "Relu+Neg",
             {g.find_node("relu"), g.find_node("neg")},
             {x},
             {y},
             fn_kernel([](KernelContext& ctx) {
               const Tensor& in = ctx.in(0);
               Tensor& out = ctx.output(0, DType::Float32, in.dims());
               for (int64_t i = 0; i < in.numel(); ++i) {
                 out.data<float>()[i] = -std::max(0.0f, in.data<float>()[i]);
               }
             }),
             std::nullopt};
  substitute_step(steps, fused);
  ASSERT_EQ(steps.size(), 1u);
  Executor ex(g, steps);
  auto out = ex.run({{"x", Tensor::from_floats({3}, {-1, 2, 3})}});
  EXPECT_EQ(out[0].to_floats(), (std::vector<float>{0, -2, -3}));
  // A node already replaced cannot be fused again.
  Step again = fused;
  again.nodes = {g.find_node("relu")};
  EXPECT_THROW(substitute_step(steps, again), Error);
}

TEST(Executor, ShapeGatherConcatReshapeSubgraphRuns) {
  // Flatten all but the first dim the way exporters do: Reshape(x, Concat(Gather(Shape(x), 0),
  // -1)).
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 4});
  ValueId shape = b.op("Shape", {x}, {}, "", Shape::of({3}), DType::Int64);
  ValueId zero = b.constant("zero", TensorData::from_int64s({1}, {0}));
  ValueId n = b.op("Gather", {shape, zero}, {}, "", Shape::of({1}), DType::Int64);
  ValueId minus1 = b.constant("m1", TensorData::from_int64s({1}, {-1}));
  ValueId spec =
      b.op("Concat", {n, minus1}, {{"axis", int64_t{0}}}, "", Shape::of({2}), DType::Int64);
  b.output(b.op("Reshape", {x, spec}));
  Graph g = b.build();
  Executor ex(g);
  for (int64_t batch : {2, 5}) {  // shapes come from the actual tensors, not inference
    auto out = ex.run({{"x", Tensor(DType::Float32, {batch, 3, 4})}});
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{batch, 12}));
  }
}

// Conv(3x3, pad 1) -> BatchNormalization -> Relu -> GlobalAveragePool -> Flatten -> Gemm,
// checked against a direct computation.
TEST(Executor, SmallCnnEndToEnd) {
  const int64_t C = 2, K = 3, H = 5, W = 4, M = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto rnd = [&](int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = dist(rng);
    return v;
  };
  auto w = rnd(K * C * 9), bias = rnd(K), gamma = rnd(K), beta = rnd(K), mean = rnd(K),
       var = rnd(K), fc = rnd(M * K), fcb = rnd(M), xin = rnd(C * H * W);
  for (auto& v : var) v = std::abs(v) + 0.5f;
  GraphBuilder b;
  ValueId x = b.input("x", {1, C, H, W});
  auto cst = [&](const char* name, std::vector<int64_t> dims, const std::vector<float>& v) {
    return b.constant(name, TensorData::from_floats(std::move(dims), v));
  };
  ValueId conv = b.op("Conv", {x, cst("w", {K, C, 3, 3}, w), cst("b", {K}, bias)},
                      {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  ValueId bn = b.op("BatchNormalization", {conv, cst("g", {K}, gamma), cst("be", {K}, beta),
                                           cst("mu", {K}, mean), cst("var", {K}, var)});
  ValueId relu = b.op("Relu", {bn});
  ValueId gap = b.op("GlobalAveragePool", {relu});
  ValueId flat = b.op("Flatten", {gap});
  b.output(
      b.op("Gemm", {flat, cst("fc", {M, K}, fc), cst("fcb", {M}, fcb)}, {{"transB", int64_t{1}}}));
  Graph g = b.build();
  Executor ex(g, ExecutorOptions{2});
  auto out = ex.run({{"x", Tensor::from_floats({1, C, H, W}, xin)}});
  ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{1, M}));

  std::vector<double> pooled(K, 0.0);
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t i = 0; i < H; ++i) {
      for (int64_t j = 0; j < W; ++j) {
        double acc = bias[k];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t di = -1; di <= 1; ++di)
            for (int64_t dj = -1; dj <= 1; ++dj) {
              int64_t ii = i + di, jj = j + dj;
              if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
              acc += xin[(c * H + ii) * W + jj] * w[((k * C + c) * 3 + di + 1) * 3 + dj + 1];
            }
        double y = (acc - mean[k]) / std::sqrt(var[k] + 1e-5) * gamma[k] + beta[k];
        pooled[k] += std::max(0.0, y) / (H * W);
      }
    }
  }
  for (int64_t m = 0; m < M; ++m) {
    double want = fcb[m];
    for (int64_t k = 0; k < K; ++k) want += pooled[k] * fc[m * K + k];
    EXPECT_NEAR(out[0].data<float>()[m], want, 1e-4) << "output " << m;
  }
}

}  // namespace
}  // namespace fx
