// SPDX-License-Identifier: Apache-2.0
// Generated Softmax and LayerNorm row kernels against the unfused runtime on awkward
// shapes: rows that are not a multiple of the vector width (1, 3, 15, 17, 1000, 4099), rows of
// very large and very small values (Softmax must subtract the row max; LayerNorm must
// not lose the variance of values far from 0), and tensors large enough (>= 16 MiB)
// that outputs go through the streaming stores, with rows that do not start on a
// cache line. Several threads, so that rows are split between them.

#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::layernorm_ref;
using testing::max_rel_err;
using testing::softmax_ref;

using testing::random_floats;

// Errors are relative, absolute below 0.1 (numpy's allclose with atol = rtol / 10).
constexpr double kFloor = 0.1;

struct RowCase {
  std::string name;
  std::vector<int64_t> dims;
  float lo, hi;               // input values uniform in [lo, hi)
  double ln_tol = 5e-5;       // LayerNorm's error against the double reference
  double runtime_tol = 5e-5;  // against the unfused runtime; 0: not compared
};

std::vector<float> gamma_of(int64_t row) {
  return random_floats(static_cast<std::size_t>(row), 21);
}
std::vector<float> beta_of(int64_t row) {
  return random_floats(static_cast<std::size_t>(row), 22);
}

// Softmax(x * 1) and LayerNormalization(x) of the same input, one group each.
Graph row_graph(const std::vector<int64_t>& dims) {
  GraphBuilder b;
  auto x = b.input("x", dims);
  const int64_t row = dims.back();
  auto one = b.constant("one", TensorData::from_floats({}, {1.f}));
  auto sx = b.op("Mul", {x, one}, {}, "sm_scale");
  b.output(b.op("Softmax", {sx}, {{"axis", int64_t{-1}}}, "sm"));
  auto gamma = b.constant("gamma", TensorData::from_floats({row}, gamma_of(row)));
  auto beta = b.constant("beta", TensorData::from_floats({row}, beta_of(row)));
  b.output(b.op("LayerNormalization", {x, gamma, beta}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5f}},
                "ln"));
  return b.build();
}

// The generated kernels against the double references and, where the runtime's own
// float arithmetic is accurate enough (runtime_tol), against the unfused runtime.
void check_case(const RowCase& c) {
  SCOPED_TRACE(c.name);
  Graph g = row_graph(c.dims);
  std::vector<FusionGroup> groups{testing::make_group("fg-sm", {"sm_scale", "sm"}),
                                  testing::make_group("fg-ln", {"ln"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("row_kernels");
  opt.stem = "row_kernels_test";
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_TRUE(p.note.empty()) << p.note;
  for (const auto& gb : p.groups)
    ASSERT_EQ(gb.outcome, GroupOutcome::Compiled) << gb.id << ": " << gb.detail;
  const int64_t row = c.dims.back();
  auto xs = random_floats(static_cast<std::size_t>(dims_numel(c.dims)), 5, c.lo, c.hi);
  std::map<std::string, Tensor> in{{"x", Tensor::from_floats(c.dims, xs)}};
  ExecutorOptions eo;
  eo.threads = 3;  // uneven split of the rows
  auto actual = Executor(g, p.steps, eo).run(in);
  ASSERT_EQ(actual.size(), 2u);
  auto sm = actual[0].to_floats(), ln = actual[1].to_floats();
  for (std::size_t k = 0; k < sm.size(); ++k) {
    ASSERT_TRUE(std::isfinite(sm[k])) << "softmax element " << k;
    ASSERT_TRUE(std::isfinite(ln[k])) << "layernorm element " << k;
  }
  EXPECT_LT(max_rel_err(sm, softmax_ref(xs, static_cast<std::size_t>(row)), kFloor), 2e-5)
      << "softmax";
  EXPECT_LT(
      max_rel_err(ln, layernorm_ref(xs, static_cast<std::size_t>(row), gamma_of(row), beta_of(row)),
                  kFloor),
      c.ln_tol)
      << "layernorm";
  if (c.runtime_tol > 0) {
    auto expected = Executor(g, eo).run(in);
    auto d = testing::compare(expected, actual);
    EXPECT_LT(d.max_rel, c.runtime_tol) << "against the unfused runtime, max abs " << d.max_abs;
  }
  // Softmax rows sum to 1.
  const auto& a = sm;
  for (std::size_t r = 0; r < a.size() / static_cast<std::size_t>(row); r += 97) {
    double sum = 0;
    for (int64_t j = 0; j < row; ++j) sum += a[r * static_cast<std::size_t>(row) + j];
    EXPECT_NEAR(sum, 1.0, 1e-4) << "row " << r;
  }
}

TEST(RowKernels, OddRowLengthsMatchTheRuntime) {
  for (const RowCase& c :
       {RowCase{"row 1", {41, 1}, -1, 1}, RowCase{"row 3", {37, 3}, -1, 1},
        RowCase{"row 15", {3, 11, 15}, -3, 3}, RowCase{"row 17", {70, 17}, -3, 3},
        RowCase{"row 1000", {9, 1000}, -5, 5}, RowCase{"row 4099", {7, 4099}, -5, 5}})
    check_case(c);
}

TEST(RowKernels, ExtremeValuesStayFinite) {
  // exp(90) overflows float: Softmax must subtract the row max. Values around 1e4 with
  // a spread of 1: LayerNorm's variance must come from the deviations, not from
  // E[x^2] - E[x]^2 (which cancels to noise in float).
  check_case({"large positive", {40, 33}, 80, 100});
  check_case({"tiny values", {40, 31}, -1e-30f, 1e-30f});
  // LayerNorm of values far from 0: x - mean cannot be better than the float mean's
  // rounding (5e-4 at 1e4) over the deviation: 2e-5 for a spread of 100, 2e-3 for a
  // spread of 1. The runtime's sequential float sum is 5x (spread 100) to 30x
  // (spread 1: 0.5) further off the double reference than the generated kernel.
  check_case({"large negative", {40, 33}, -1e4f, -9.9e3f, 3e-4, 1e-3});
  check_case({"tiny spread far from 0", {40, 1000}, 1e4f, 1e4f + 1, 3e-2, 0});
}

TEST(RowKernels, LargeTensorsUseStreamingStores) {
  // 4200 x 1001 floats = 16.8 MB >= the 16 MiB streaming threshold; rows of 4004
  // bytes, so most rows start off a cache line.
  Graph g = row_graph({4200, 1001});
  std::string src = generate_group_source(g, testing::make_group("fg-sm", {"sm_scale", "sm"}));
  // Softmax's normalization is done while streaming the row out.
  EXPECT_NE(src.find("fx_store_stream_scaled(q0 + j0, d0, j1 - j0, 1.f / v"), std::string::npos)
      << src;
  // The exp pass (a row primitive: exp of the buffered scaled row) prefetches two rows
  // ahead.
  EXPECT_NE(src.find("fx_exp_sum(b"), std::string::npos) << src;
  EXPECT_NE(src.find("pf ? p0 + 2 * row + j0 : nullptr"), std::string::npos) << src;
  // LayerNorm's output is computed while streaming it out (one pass, no block buffer).
  std::string ln = generate_group_source(g, testing::make_group("fg-ln", {"ln"}));
  EXPECT_NE(ln.find("fx_store_stream_norm(q0 + j0, p0 + j0, "), std::string::npos) << ln;
  check_case({"streamed", {4200, 1001}, -8, 8});
}

// scores * scale + mask -> Softmax, the attention pattern: the mask [rows, row] holds
// 0 or -inf (a masked position), or a large negative value; one group.
Graph masked_softmax_graph(const std::vector<int64_t>& dims) {
  GraphBuilder b;
  auto x = b.input("x", dims);
  auto mask = b.input("mask", dims);
  auto scale = b.constant("scale", TensorData::from_floats({}, {0.125f}));
  auto s = b.op("Mul", {x, scale}, {}, "att_scale");
  s = b.op("Add", {s, mask}, {}, "att_mask");
  b.output(b.op("Softmax", {s}, {{"axis", int64_t{-1}}}, "att_softmax"));
  return b.build();
}

void check_masked_softmax(const std::vector<int64_t>& dims, float lo, float hi) {
  SCOPED_TRACE(dims_str(dims));
  Graph g = masked_softmax_graph(dims);
  std::vector<FusionGroup> groups{
      testing::make_group("fg-att", {"att_scale", "att_mask", "att_softmax"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("row_kernels");
  opt.stem = "row_kernels_masked_test";
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_TRUE(p.note.empty()) << p.note;
  ASSERT_EQ(p.groups.at(0).outcome, GroupOutcome::Compiled) << p.groups[0].detail;
  const std::size_t n = static_cast<std::size_t>(dims_numel(dims)),
                    row = static_cast<std::size_t>(dims.back());
  auto xs = random_floats(n, 7, lo, hi);
  // Every third position masked with -inf, every seventh with -1e4 (never a whole row:
  // position 1 of each row stays open).
  std::vector<float> mask(n, 0.f);
  for (std::size_t k = 0; k < n; ++k) {
    if (k % row == 1) continue;
    if (k % 3 == 0) mask[k] = -INFINITY;
    if (k % 7 == 0) mask[k] = -1e4f;
  }
  std::map<std::string, Tensor> in{{"x", Tensor::from_floats(dims, xs)},
                                   {"mask", Tensor::from_floats(dims, mask)}};
  ExecutorOptions eo;
  eo.threads = 3;
  auto actual = Executor(g, p.steps, eo).run(in);
  auto expected = Executor(g, eo).run(in);
  auto a = actual.at(0).to_floats(), e = expected.at(0).to_floats();
  ASSERT_EQ(a.size(), e.size());
  double max_abs = 0;
  for (std::size_t k = 0; k < n; ++k) {
    ASSERT_TRUE(std::isfinite(a[k])) << "element " << k;
    // exp(-inf) is exp(-87.3) ~ 1e-38 after the clamp: 0 for every purpose.
    if (mask[k] == -INFINITY) {
      ASSERT_LT(a[k], 1e-37f) << "masked element " << k;
    }
    max_abs = std::max(max_abs, double(std::fabs(a[k] - e[k])));
  }
  EXPECT_LT(max_abs, 2e-6) << "against the unfused runtime";
  // Against double on the same scores.
  std::vector<float> scores(n);
  for (std::size_t k = 0; k < n; ++k) scores[k] = xs[k] * 0.125f + mask[k];
  EXPECT_LT(max_rel_err(a, softmax_ref(scores, row), kFloor), 2e-5);
}

TEST(RowKernels, MaskedSoftmaxMatchesTheRuntime) {
  // Odd rows (tails after the vector loop), a row of 2 with one masked position, and
  // scores spread over [-700, 700] so that exp's argument covers [-175, 0] (exp
  // underflows below -87: those probabilities are 0 or denormal in both).
  check_masked_softmax({5, 3, 17}, -8, 8);
  check_masked_softmax({64, 2}, -8, 8);
  check_masked_softmax({13, 1001}, -700, 700);
  // >= 16 MiB: streaming stores and the prefetch of later rows.
  check_masked_softmax({4100, 1025}, -30, 30);
}

TEST(RowKernels, SoftmaxExpSkipsTheUpperClampAndPrefetchesInTheExpPass) {
  Graph g = masked_softmax_graph({4096, 1024});
  std::string src = generate_group_source(
      g, testing::make_group("fg-att", {"att_scale", "att_mask", "att_softmax"}));
  // x - rowmax <= 0: the exp needs no upper clamp.
  EXPECT_NE(src.find("fx_expf_le0(v"), std::string::npos) << src;
  // Row t + 2 of both inputs is prefetched inside pass 1 (max is pass 0; exp and
  // its sum are pass 1), not in a burst before the row.
  const auto pass1 = src.find("// pass 1"), pass2 = src.find("// pass 2");
  ASSERT_NE(pass1, std::string::npos);
  ASSERT_NE(pass2, std::string::npos);
  for (const char* pf :
       {"__builtin_prefetch(p0 + 2 * row + k)", "__builtin_prefetch(p1 + 2 * row + k)"}) {
    const auto at = src.find(pf);
    EXPECT_GT(at, pass1) << pf << "\n" << src;
    EXPECT_LT(at, pass2) << pf << "\n" << src;
  }
}

TEST(RowKernels, DivisionByAnInputConstantKeepsTheBitsOfTheOpsApart) {
  // (x - mean) / std with per-channel constants, as a detector normalizes its image:
  // the divisor is a per-row scalar read from an input, which the group divides by as
  // the Div apart does (only a divisor the group computes, like Softmax's sum, is
  // inverted once per row). Dividing by std and multiplying by 1 / std differ in the
  // last bit for about a third of these values.
  const std::vector<int64_t> dims{1, 3, 17, 23};
  GraphBuilder b;
  auto x = b.input("x", dims);
  auto mean = b.constant("mean", TensorData::from_floats({1, 3, 1, 1}, {0.485f, 0.456f, 0.406f}));
  auto sd = b.constant("std", TensorData::from_floats({1, 3, 1, 1}, {0.229f, 0.224f, 0.225f}));
  b.output(b.op("Div", {b.op("Sub", {x, mean}, {}, "sub"), sd}, {}, "div"));
  Graph g = b.build();
  std::vector<FusionGroup> groups{testing::make_group("fg-norm", {"sub", "div"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("row_kernels");
  opt.stem = "row_kernels_norm_test";
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_EQ(p.groups.at(0).outcome, GroupOutcome::Compiled) << p.groups[0].detail;
  std::map<std::string, Tensor> in{
      {"x", Tensor::from_floats(
                dims, random_floats(static_cast<std::size_t>(dims_numel(dims)), 9, 0, 1))}};
  for (int threads : {1, 2}) {
    ExecutorOptions eo;
    eo.threads = threads;
    const auto want = Executor(g, eo).run(in).at(0).to_floats();
    const auto got = Executor(g, p.steps, eo).run(in).at(0).to_floats();
    ASSERT_EQ(got.size(), want.size());
    std::size_t differ = 0;
    for (std::size_t k = 0; k < got.size(); ++k) differ += got[k] != want[k];
    EXPECT_EQ(differ, 0u) << "of " << got.size() << " elements, threads " << threads;
  }
}

}  // namespace
}  // namespace fx
