// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the codegen tests and the fused kernel tests (tests/fused_kernels,
// which run their kernels through fused programs): seeded inputs, tensor comparison, a
// private kernel cache folder, groups made by hand, seeded weights, programs of post-op
// groups, fused steps checked against the runtime.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "codegen/fused_program.h"
#include "ir/graph.h"
#include "ir/graph_builder.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"
#include "util/error.h"

namespace fx::testing {

inline std::vector<float> random_floats(std::size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Softmax of each row of `row` values, in double (the reference of the row kernel tests).
inline std::vector<double> softmax_ref(const std::vector<float>& x, std::size_t row) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < x.size(); r += row) {
    double m = -INFINITY, s = 0;
    for (std::size_t j = 0; j < row; ++j) m = std::max(m, double(x[r + j]));
    for (std::size_t j = 0; j < row; ++j) s += y[r + j] = std::exp(double(x[r + j]) - m);
    for (std::size_t j = 0; j < row; ++j) y[r + j] /= s;
  }
  return y;
}

// LayerNormalization over each row of `row` values, in double (the reference of the row
// kernel tests): scale and shift by `gamma` and `beta` (one per row element) when given.
inline std::vector<double> layernorm_ref(const std::vector<float>& x, std::size_t row,
                                         const std::vector<float>& gamma = {},
                                         const std::vector<float>& beta = {},
                                         double eps = double(1e-5f)) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < x.size(); r += row) {
    double mu = 0, var = 0;
    for (std::size_t j = 0; j < row; ++j) mu += x[r + j];
    mu /= double(row);
    for (std::size_t j = 0; j < row; ++j) var += (x[r + j] - mu) * (x[r + j] - mu);
    const double inv = 1 / std::sqrt(var / double(row) + eps);
    for (std::size_t j = 0; j < row; ++j) {
      y[r + j] = (x[r + j] - mu) * inv;
      if (!gamma.empty()) y[r + j] = y[r + j] * gamma[j] + beta[j];
    }
  }
  return y;
}

// max over elements of |a - e| / max(|e|, floor): relative error, absolute below `floor`.
inline double max_rel_err(const std::vector<float>& a, const std::vector<double>& e, double floor) {
  double m = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    m = std::max(m, std::fabs(double(a[k]) - e[k]) / std::max(std::fabs(e[k]), floor));
  return m;
}

inline Tensor random_tensor(const std::vector<int64_t>& dims, uint32_t seed) {
  return Tensor::from_floats(dims, random_floats(static_cast<std::size_t>(dims_numel(dims)), seed));
}

// Inputs for every runtime input: floats in [-1, 1), integers in [0, 8).
inline std::map<std::string, Tensor> seeded_inputs(const Graph& g, uint32_t seed) {
  std::map<std::string, Tensor> m;
  for (ValueId v : g.runtime_inputs()) {
    const Value& val = g.value(v);
    auto dims = val.shape.static_dims();
    if (val.dtype == DType::Int64) {
      std::vector<int64_t> x(static_cast<std::size_t>(dims_numel(dims)));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>((i * 7 + seed) % 8);
      m[val.name] = Tensor::from_int64s(dims, x);
    } else {
      m[val.name] = random_tensor(dims, seed++);
    }
  }
  return m;
}

struct Diff {
  double max_abs = 0, max_rel = 0;
};

// Relative error against max(|expected|, 0.1): numpy's allclose with rtol = r and
// atol = r / 10, so that float rounding of values near 0 does not dominate.
inline Diff compare(const std::vector<Tensor>& expected, const std::vector<Tensor>& actual) {
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

// Runs `fused` twice (the second run reuses the parts and primitives its kernels built
// on the first) and expects each output within a relative `tol` of `expected`, the
// unfused runtime's. `context` names the case in failure messages.
inline void expect_two_runs_match(Executor& fused, const std::map<std::string, Tensor>& inputs,
                                  const std::vector<Tensor>& expected, const std::string& context,
                                  double tol = 1e-4) {
  for (int run = 0; run < 2; ++run) {
    auto actual = fused.run(inputs);
    ASSERT_EQ(expected.size(), actual.size()) << context;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      auto d = compare({expected[i]}, {actual[i]});
      EXPECT_LT(d.max_rel, tol) << context << ", output " << i << ", run " << run << ", max abs "
                                << d.max_abs;
    }
  }
}

// Runs `steps` on 1, 2 and 3 threads, twice each, against the unfused runtime.
inline void expect_steps_match_unfused(const Graph& g, const std::vector<Step>& steps,
                                       const std::map<std::string, Tensor>& inputs) {
  for (int threads : {1, 2, 3}) {
    auto expected = Executor(g, ExecutorOptions{threads}).run(inputs);
    Executor fused(g, steps, ExecutorOptions{threads});
    expect_two_runs_match(fused, inputs, expected, "threads " + std::to_string(threads));
  }
}

// A kernel cache private to one test binary run.
inline std::string test_cache_dir(const std::string& name) {
  auto dir = std::filesystem::path(FX_BINARY_DIR) / "codegen-test-cache" / name;
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline FusionGroup make_group(const std::string& id, std::vector<std::string> nodes) {
  FusionGroup fg;
  fg.id = id;
  fg.nodes = std::move(nodes);
  fg.pattern = "test";
  fg.status = GroupStatus::Accepted;
  return fg;
}

inline std::vector<const FusionGroup*> ptrs(const std::vector<FusionGroup>& gs) {
  std::vector<const FusionGroup*> v;
  for (const auto& g : gs) v.push_back(&g);
  return v;
}

// A seeded constant of shape `dims`, values in [lo, hi): a weight or a bias.
inline ValueId random_constant(GraphBuilder& b, const std::string& name,
                               const std::vector<int64_t>& dims, uint32_t seed, float lo = -0.3f,
                               float hi = 0.3f) {
  return b.constant(
      name, TensorData::from_floats(
                dims, random_floats(static_cast<std::size_t>(dims_numel(dims)), seed, lo, hi)));
}

// The fused program of `groups` built without a compiler, each group expected to have
// become a oneDNN primitive with post-ops (the conv and MatMul tests' premise).
inline FusedProgram post_op_program(const Graph& g, const std::vector<FusionGroup>& groups) {
  CodegenOptions opt;
  opt.compile = false;
  FusedProgram p = build_fused_program(g, ptrs(groups), opt);
  for (const auto& gb : p.groups)
    EXPECT_EQ(gb.outcome, GroupOutcome::DnnlPostOps) << gb.id << ": " << gb.detail;
  return p;
}

}  // namespace fx::testing
