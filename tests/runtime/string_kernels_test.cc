// SPDX-License-Identifier: Apache-2.0
// String tensors: storage, TensorProto round trip, Cast to and from string,
// StringNormalizer, TfIdfVectorizer, data-movement ops on strings (runtime/string_adapter.h),
// and the refusal of ops that take no strings.

#include <filesystem>

#include "onnx/tensor_file.h"
#include "runtime_test_util.h"
#include "util/error.h"

namespace fx {
namespace {

using test::run_op;
using Strings = std::vector<std::string>;

TEST(StringTensor, OwnsItsElementsAndClonesDeeply) {
  Tensor t = Tensor::from_strings({2}, {"ab", "cde"});
  EXPECT_TRUE(t.is_string());
  EXPECT_EQ(t.byte_size(), 0u);  // no raw bytes for byte-copying kernels to read
  EXPECT_EQ(t.string_bytes(), 5u);
  Tensor c = t.clone();
  c.data<std::string>()[0] = "changed";
  EXPECT_EQ(t.to_strings(), (Strings{"ab", "cde"}));
  EXPECT_EQ(t.reshaped({1, 2}).to_strings(), (Strings{"ab", "cde"}));
  auto data = t.to_tensor_data();
  EXPECT_EQ(data->strings(), (Strings{"ab", "cde"}));
  EXPECT_EQ(data->byte_size(), 5u);
}

TEST(StringTensor, RoundTripsThroughATensorFile) {
  const auto path = std::filesystem::temp_directory_path() / "fx_string_tensor.pb";
  write_tensor_file(path.string(),
                    *Tensor::from_strings({1, 3}, {"x", "", "long one"}).to_tensor_data(), "s");
  Tensor back = Tensor::from_data(read_tensor_file(path.string()));
  EXPECT_EQ(back.dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(back.to_strings(), (Strings{"x", "", "long one"}));
}

TEST(StringKernels, CastWritesShortestNumbersAndReadsThemBack) {
  Tensor x = Tensor::from_floats(
      {5}, {0.039187793f, 1.0f, -2.5f, std::numeric_limits<float>::infinity(), std::nanf("")});
  auto s = run_op("Cast", {x}, {{"to", static_cast<int64_t>(DType::String)}});
  EXPECT_EQ(s[0].to_strings(), (Strings{"0.039187793", "1", "-2.5", "INF", "NaN"}));
  auto back = run_op("Cast", {s[0]}, {{"to", static_cast<int64_t>(DType::Float32)}})[0].to_floats();
  EXPECT_FLOAT_EQ(back[0], 0.039187793f);
  EXPECT_EQ(back[3], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(back[4]));
  auto ints = run_op("Cast", {Tensor::from_strings({2}, {"-7", "+INF"})},
                     {{"to", static_cast<int64_t>(DType::Float64)}})[0];
  EXPECT_EQ(ints.dtype(), DType::Float64);
  EXPECT_EQ(ints.data<double>()[0], -7.0);
  EXPECT_EQ(ints.data<double>()[1], std::numeric_limits<double>::infinity());
  auto i64 = run_op("Cast", {Tensor::from_int64s({1}, {-123456789012})},
                    {{"to", static_cast<int64_t>(DType::String)}})[0];
  EXPECT_EQ(i64.to_strings(), (Strings{"-123456789012"}));
  // CastLike takes its target from a string tensor.
  auto like = run_op("CastLike", {x, Tensor::from_strings({1}, {"0"})})[0];
  EXPECT_EQ(like.to_strings()[2], "-2.5");
  EXPECT_THROW(run_op("Cast", {Tensor::from_strings({1}, {"abc"})},
                      {{"to", static_cast<int64_t>(DType::Float32)}}),
               Error);
}

TEST(StringKernels, StringNormalizerDropsStopwordsThenChangesCase) {
  Tensor x = Tensor::from_strings({1, 4}, {"Monday", "tuesday", "MONDAY", "Wed"});
  auto insensitive =
      run_op("StringNormalizer", {x},
             {{"case_change_action", std::string("UPPER")}, {"stopwords", Strings{"monday"}}})[0];
  EXPECT_EQ(insensitive.dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(insensitive.to_strings(), (Strings{"TUESDAY", "WED"}));
  auto sensitive = run_op("StringNormalizer", {x},
                          {{"case_change_action", std::string("LOWER")},
                           {"is_case_sensitive", int64_t{1}},
                           {"stopwords", Strings{"Monday"}}})[0];
  EXPECT_EQ(sensitive.to_strings(), (Strings{"tuesday", "monday", "wed"}));
  auto none = run_op("StringNormalizer", {Tensor::from_strings({1}, {"a"})},
                     {{"stopwords", Strings{"a"}}})[0];
  EXPECT_EQ(none.dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(none.to_strings(), (Strings{""}));
}

TEST(StringKernels, TfIdfCountsSkipGramsAndUnigramsOnce) {
  // Pool: unigrams {a, b} -> columns 0, 1; bigram (a, b) -> column 2.
  GraphBuilder::AttrList attrs = {{"min_gram_length", int64_t{1}},
                                  {"max_gram_length", int64_t{2}},
                                  {"max_skip_count", int64_t{1}},
                                  {"mode", std::string("TF")},
                                  {"ngram_counts", std::vector<int64_t>{0, 2}},
                                  {"ngram_indexes", std::vector<int64_t>{0, 1, 2}},
                                  {"pool_strings", Strings{"a", "b", "a", "b"}}};
  // "a b b": unigram a once, b twice (not again for skip 1); (a, b) at skip 0 and
  // (a, _, b) at skip 1.
  auto y = run_op("TfIdfVectorizer", {Tensor::from_strings({3}, {"a", "b", "b"})}, attrs)[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(y.to_floats(), (std::vector<float>{1, 2, 2}));
  // The same over int tokens, two rows, weighted.
  GraphBuilder::AttrList ints = attrs;
  ints.back() = {"pool_int64s", std::vector<int64_t>{4, 5, 4, 5}};
  ints[3] = {"mode", std::string("TFIDF")};
  ints.emplace_back("weights", std::vector<float>{1, 0.5f, 2});
  auto rows = run_op("TfIdfVectorizer", {Tensor::from_int32s({2, 3}, {4, 5, 5, 5, 9, 4})}, ints)[0];
  EXPECT_EQ(rows.dims(), (std::vector<int64_t>{2, 3}));
  // Row 4 5 5: counts 1, 2, 2 (as above); row 5 9 4: 1, 1, 0 (no (5, 4) in the pool).
  EXPECT_EQ(rows.to_floats(), (std::vector<float>{1, 1, 4, 1, 0.5f, 0}));
}

// Concat, Gather, Transpose, Slice, Where and Split move string elements like numbers.
TEST(StringKernels, DataMovementOpsMoveStringElements) {
  Tensor a = Tensor::from_strings({2, 2}, {"a", "b", "c", "d"});
  Tensor b = Tensor::from_strings({1, 2}, {"e", "ff"});
  auto cat = run_op("Concat", {a, b}, {{"axis", int64_t{0}}})[0];
  EXPECT_EQ(cat.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(cat.to_strings(), (Strings{"a", "b", "c", "d", "e", "ff"}));
  auto picked = run_op("Gather", {cat, test::int64s({2}, {2, 0})}, {{"axis", int64_t{0}}})[0];
  EXPECT_EQ(picked.to_strings(), (Strings{"e", "ff", "a", "b"}));
  auto t = run_op("Transpose", {a}, {{"perm", std::vector<int64_t>{1, 0}}})[0];
  EXPECT_EQ(t.to_strings(), (Strings{"a", "c", "b", "d"}));
  auto sliced = run_op(
      "Slice", {cat, test::int64s({1}, {1}), test::int64s({1}, {3}), test::int64s({1}, {0})})[0];
  EXPECT_EQ(sliced.to_strings(), (Strings{"c", "d", "e", "ff"}));
  Tensor cond = Tensor::from_bools({2, 2}, {true, false, false, true});
  auto w = run_op("Where", {cond, a, Tensor::from_strings({1}, {"z"})})[0];
  EXPECT_EQ(w.to_strings(), (Strings{"a", "z", "z", "d"}));
  auto halves = run_op("Split", {cat}, {{"axis", int64_t{1}}}, 2);
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(halves[1].to_strings(), (Strings{"b", "d", "ff"}));
  // Numbers still move as numbers through the same (wrapped) kernels.
  auto n =
      run_op("Concat", {test::int64s({1}, {7}), test::int64s({1}, {8})}, {{"axis", int64_t{0}}});
  EXPECT_EQ(n[0].dtype(), DType::Int64);
}

// Unique, NonZero, Trilu, Pad and OneHot see strings numbered by value: equal strings
// are equal, order is byte order and the empty string is zero.
TEST(StringKernels, OrderingAndZeroingOpsTreatTheEmptyStringAsZero) {
  auto u = run_op("Unique", {Tensor::from_strings({4}, {"b", "a", "b", ""})}, {}, 4);
  EXPECT_EQ(u[0].to_strings(), (Strings{"", "a", "b"}));
  EXPECT_EQ(u[0].dtype(), DType::String);
  EXPECT_EQ(u[3].dtype(), DType::Int64);  // counts stay numbers
  EXPECT_EQ(u[3].to_int64s(), (std::vector<int64_t>{1, 1, 2}));
  auto nz = run_op("NonZero", {Tensor::from_strings({3}, {"a", "", "c"})})[0];
  EXPECT_EQ(nz.dtype(), DType::Int64);
  EXPECT_EQ(nz.to_int64s(), (std::vector<int64_t>{0, 2}));
  auto upper = run_op("Trilu", {Tensor::from_strings({2, 2}, {"a", "b", "c", "d"})})[0];
  EXPECT_EQ(upper.to_strings(), (Strings{"a", "b", "", "d"}));
  auto padded = run_op("Pad", {Tensor::from_strings({1}, {"x"}), test::int64s({2}, {1, 0})})[0];
  EXPECT_EQ(padded.to_strings(), (Strings{"", "x"}));
  auto hot = run_op("OneHot", {test::int64s({1}, {1}), test::int64s({}, {2}),
                               Tensor::from_strings({2}, {"off", "on"})})[0];
  EXPECT_EQ(hot.to_strings(), (Strings{"off", "on"}));
}

TEST(StringKernels, AnOpWithoutAStringKernelRefusesStrings) {
  Tensor s = Tensor::from_strings({2}, {"a", "b"});
  try {
    run_op("Add", {s, s});
    FAIL() << "Add took strings";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("string tensors are not supported by Add"),
              std::string::npos)
        << e.what();
  }
  // Views pass strings through.
  EXPECT_EQ(run_op("Reshape", {s, test::int64s({2}, {1, 2})})[0].to_strings(), (Strings{"a", "b"}));
  EXPECT_EQ(run_op("Identity", {s})[0].to_strings(), (Strings{"a", "b"}));
}

}  // namespace
}  // namespace fx
