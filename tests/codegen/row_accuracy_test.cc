// SPDX-License-Identifier: Apache-2.0
// Generated LayerNorm and Softmax row kernels against a double reference, after the
// row-kernel rewrites (codegen/row_rewrite.h: LayerNorm's mean and variance in one pass
// as sums shifted by the mean of the row's first 64 values; every reduction in 64 lane
// accumulators): rows shorter than one lane step, rows with a tail after the lane loop, rows whose
// mean is 1e4 with a spread of 1 (where E[x^2] - E[x]^2 unshifted cancels to noise in
// float), a first value or first 64 values far from the rest (the shift's worst
// cases), and Softmax rows
// holding -inf and values near float's maximum. Each case runs twice: built with the
// kernels' own flags (-march=native: the AVX-512 row primitives fx_row_max and
// fx_exp_sum on the bench machine) and for AVX2 without AVX-512 (their generic loops,
// what a machine without AVX-512 runs).

#include <gtest/gtest.h>

#include <limits>

#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::layernorm_ref;
using testing::max_rel_err;
using testing::softmax_ref;

constexpr float kEps = 1e-5f;

// LayerNormalization (scale 1, bias 0: the output's own mean and variance are checked)
// and Softmax of x, one group each, run with 2 threads.
struct RowRun {
  std::vector<float> ln, sm;
};

// The kernel flags of a parameter: "native" (the defaults) or "avx2".
std::vector<std::string> flags_of(const std::string& which) {
  if (which == "native") return CompilerOptions{}.flags;
  return {"-O3",
          "-march=x86-64-v3",
          "-fopenmp",
          "-fno-math-errno",
          "-fno-trapping-math",
          "-mprefer-vector-width=256",
          "-shared",
          "-fPIC"};
}

RowRun run_rows(const std::vector<int64_t>& dims, const std::vector<float>& xs,
                const std::string& which) {
  GraphBuilder b;
  auto x = b.input("x", dims);
  const int64_t row = dims.back();
  std::vector<float> ones(static_cast<std::size_t>(row), 1.f), zeros(ones.size(), 0.f);
  auto gamma = b.constant("gamma", TensorData::from_floats({row}, ones));
  auto beta = b.constant("beta", TensorData::from_floats({row}, zeros));
  b.output(b.op("LayerNormalization", {x, gamma, beta}, {{"axis", int64_t{-1}}, {"epsilon", kEps}},
                "ln"));
  b.output(b.op("Softmax", {x}, {{"axis", int64_t{-1}}}, "sm"));
  Graph g = b.build();
  std::vector<FusionGroup> groups{testing::make_group("fg-ln", {"ln"}),
                                  testing::make_group("fg-sm", {"sm"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("row_accuracy");
  opt.stem = "row_accuracy_test";
  opt.compiler.flags = flags_of(which);
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  EXPECT_TRUE(p.note.empty()) << p.note;
  for (const auto& gb : p.groups)
    EXPECT_EQ(gb.outcome, GroupOutcome::Compiled) << gb.id << ": " << gb.detail;
  ExecutorOptions eo;
  eo.threads = 2;
  auto out = Executor(g, p.steps, eo).run({{"x", Tensor::from_floats(dims, xs)}});
  return {out.at(0).to_floats(), out.at(1).to_floats()};
}

// The variance of each output row (LayerNorm with scale 1: var / (var + eps)) against
// the double reference's: a lost variance shows here even where x - mean's own
// rounding (the float mean of values near 1e4) dominates the elementwise error.
double max_row_variance_err(const std::vector<float>& y, const std::vector<double>& ref,
                            std::size_t row) {
  double m = 0;
  for (std::size_t r = 0; r < y.size(); r += row) {
    double ma = 0, me = 0, va = 0, ve = 0;
    for (std::size_t j = 0; j < row; ++j) ma += y[r + j], me += ref[r + j];
    ma /= double(row), me /= double(row);
    for (std::size_t j = 0; j < row; ++j)
      va += (y[r + j] - ma) * (y[r + j] - ma), ve += (ref[r + j] - me) * (ref[r + j] - me);
    m = std::max(m, std::fabs(va - ve) / double(row));
  }
  return m;
}

class RowAccuracy : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
#if !defined(__x86_64__)
    if (GetParam() != "native") GTEST_SKIP() << "x86-64 only";
#endif
  }
};

TEST_P(RowAccuracy, LayerNormAndSoftmaxMatchDoubleOnEveryRowLength) {
  for (int64_t row : {1, 7, 33, 768, 1000, 4099}) {
    SCOPED_TRACE("row " + std::to_string(row));
    const std::vector<int64_t> dims{5, row};
    auto xs = testing::random_floats(static_cast<std::size_t>(5 * row), 11, -4, 4);
    RowRun r = run_rows(dims, xs, GetParam());
    const auto ln = layernorm_ref(xs, static_cast<std::size_t>(row), {}, {}, double(kEps));
    const auto sm = softmax_ref(xs, static_cast<std::size_t>(row));
    EXPECT_LT(max_rel_err(r.ln, ln, 0.1), 2e-5);
    EXPECT_LT(max_rel_err(r.sm, sm, 1e-3 / double(row)), 2e-5);
    if (row > 1) {
      EXPECT_LT(max_row_variance_err(r.ln, ln, static_cast<std::size_t>(row)), 1e-5);
    }
  }
}

TEST_P(RowAccuracy, LayerNormKeepsTheVarianceOfRowsFarFromZero) {
  // Mean 1e4, spread 1 (variance 1/12): E[x^2] - E[x]^2 in float would be 1e8 - 1e8.
  // Row 0 starts at the row's low end, row 1 with a first value 50 above the rest
  // (about 170 standard deviations), row 2 with its first 64 values 50 above the rest
  // (the head the shift averages), rows 3-4 plain.
  for (int64_t row : {33, 768, 4099}) {
    SCOPED_TRACE("row " + std::to_string(row));
    const std::size_t n = static_cast<std::size_t>(row);
    auto xs = testing::random_floats(5 * n, 12, 1e4f - 0.5f, 1e4f + 0.5f);
    xs[0] = 1e4f - 0.5f;
    xs[n] = 1e4f + 50.f;
    for (std::size_t j = 0; j < std::min<std::size_t>(64, n); ++j) xs[2 * n + j] += 50.f;
    RowRun r = run_rows({5, row}, xs, GetParam());
    const auto ln = layernorm_ref(xs, n, {}, {}, double(kEps));
    for (float y : r.ln) ASSERT_TRUE(std::isfinite(y));
    // x - mean cannot be better than the float mean's rounding (4.9e-4 at 1e4) over the
    // standard deviation (0.29): about 2e-3 of an output of 1.
    EXPECT_LT(max_rel_err(r.ln, ln, 1.0), 5e-3);
    // The variance itself (unshifted E[x^2] - E[x]^2 would be off by O(1) or NaN).
    EXPECT_LT(max_row_variance_err(r.ln, ln, n), 1e-4);
  }
}

TEST_P(RowAccuracy, SoftmaxWithInfinitiesAndHugeValues) {
  constexpr float big = std::numeric_limits<float>::max();
  const int64_t row = 37;
  const std::size_t n = static_cast<std::size_t>(row);
  auto xs = testing::random_floats(6 * n, 13, -3, 3);
  for (std::size_t j = 0; j < n; ++j) {
    if (j % 3 == 0) xs[j] = -INFINITY;       // row 0: a third masked
    xs[n + j] = j == 20 ? 0.f : -INFINITY;   // row 1: one open position, after a lane step
    xs[2 * n + j] = j % 2 ? big : -big;      // row 2: near float's maximum, both signs
    xs[3 * n + j] = 80.f + float(j % 5);     // row 3: exp overflows without the max
    if (j % 4 == 1) xs[4 * n + j] = -1e30f;  // row 4: far below the rest
  }
  RowRun r = run_rows({6, row}, xs, GetParam());
  const auto ref = softmax_ref(xs, n);
  for (std::size_t k = 0; k < r.sm.size(); ++k) {
    ASSERT_TRUE(std::isfinite(r.sm[k])) << "element " << k;
    if (std::isinf(xs[k])) {
      EXPECT_LT(r.sm[k], 1e-37f) << "masked element " << k;
    }
  }
  EXPECT_LT(max_rel_err(r.sm, ref, 1e-3), 2e-5);
  for (std::size_t rr = 0; rr < 6; ++rr) {
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += r.sm[rr * n + j];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << rr;
  }
  EXPECT_NEAR(r.sm[n + 20], 1.f, 1e-6);
}

// Outputs of 16 MiB and more are written with streaming stores: Softmax's division and
// LayerNorm's scale and shift done while streaming each row out (rows of 1025 floats:
// most start off a cache line, so the aligned-head path runs too).
TEST_P(RowAccuracy, StreamedRowsMatchDouble) {
  const int64_t rows = 4100, row = 1025;
  const std::size_t n = static_cast<std::size_t>(row);
  auto xs = testing::random_floats(static_cast<std::size_t>(rows) * n, 14, -4, 4);
  RowRun r = run_rows({rows, row}, xs, GetParam());
  EXPECT_LT(max_rel_err(r.ln, layernorm_ref(xs, n, {}, {}, double(kEps)), 0.1), 2e-5);
  EXPECT_LT(max_rel_err(r.sm, softmax_ref(xs, n), 1e-3 / double(row)), 2e-5);
}

INSTANTIATE_TEST_SUITE_P(Flags, RowAccuracy, ::testing::Values("native", "avx2"),
                         [](const auto& info) { return info.param; });

TEST(RowAccuracySource, LayerNormIsTwoPassesWithLaneAccumulators) {
  GraphBuilder b;
  auto x = b.input("x", {64, 768});
  auto gamma = b.constant("gamma", TensorData::from_floats({768}, std::vector<float>(768, 1.f)));
  auto beta = b.constant("beta", TensorData::from_floats({768}, std::vector<float>(768, 0.f)));
  b.output(b.op("LayerNormalization", {x, gamma, beta}, {{"axis", int64_t{-1}}}, "ln"));
  Graph g = b.build();
  const std::string src = generate_group_source(g, testing::make_group("fg-ln", {"ln"}));
  EXPECT_NE(src.find("reduced in 2 passes"), std::string::npos) << src;
  EXPECT_NE(src.find("(RowHeadMean)"), std::string::npos) << src;
  EXPECT_NE(src.find("[FX_LANES];  // lane accumulators"), std::string::npos) << src;
  EXPECT_EQ(src.find("scratch"), std::string::npos) << "no row buffer\n" << src;
}

TEST(RowAccuracySource, SoftmaxPassesAreRowPrimitives) {
  GraphBuilder b;
  auto x = b.input("x", {64, 1000});
  b.output(b.op("Softmax", {x}, {{"axis", int64_t{-1}}}, "sm"));
  Graph g = b.build();
  const std::string src = generate_group_source(g, testing::make_group("fg-sm", {"sm"}));
  // The row max, unless the previous row's exp pass computed it.
  EXPECT_NE(src.find("t == carried_t ? carried_max : fx_row_max(p0 + j0, j1 - j0)"),
            std::string::npos)
      << src;
  // exp(x - max) kept in the output row, summed, the next rows prefetched; the next
  // row's max in the same loop (the last row of all without it).
  const std::string args = "p0 + j0, v1, d0, j1 - j0, pf ? p0 + 2 * row + j0 : nullptr";
  EXPECT_NE(src.find("fx_exp_sum_max(" + args + ", p0 + row + j0, &carried_max)"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("fx_exp_sum(" + args + ")"), std::string::npos) << src;
  EXPECT_NE(src.find("carried_t = t + 1;"), std::string::npos) << src;
}

}  // namespace
}  // namespace fx
