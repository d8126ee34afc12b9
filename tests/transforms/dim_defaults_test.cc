// SPDX-License-Identifier: Apache-2.0
// The assumed-dimension rule (dim_defaults.h): by name first, then by position.

#include "transforms/dim_defaults.h"

#include <gtest/gtest.h>

namespace fx::transforms {
namespace {

Shape dims(std::vector<Dim> d) {
  return Shape(std::move(d));
}
Dim sym(const std::string& s) {
  return Dim::named(s);
}
Dim num(int64_t v) {
  return Dim::fixed(v);
}

std::map<std::string, int64_t> values(const std::vector<AssumedDim>& a) {
  std::map<std::string, int64_t> m;
  for (const auto& d : a) m[d.symbol] = d.value;
  return m;
}

TEST(DimDefaults, NamesSayWhatADimIs) {
  std::vector<InputSignature> in = {
      {"input_ids", DType::Int64, dims({sym("batch_size"), sym("sequence_length")})},
      {"past", DType::Float32, dims({sym("batch_size"), num(8), sym("past_seq"), num(64)})},
      {"image", DType::Float32, dims({sym("N"), num(3), sym("height"), sym("width")})}};
  auto a = assume_dims(in, {});
  EXPECT_EQ(values(a), (std::map<std::string, int64_t>{{"batch_size", 1},
                                                       {"sequence_length", 128},
                                                       {"past_seq", 128},
                                                       {"N", 1},
                                                       {"height", 224},
                                                       {"width", 224}}));
  EXPECT_EQ(a[0].kind, DimKind::Batch);
  EXPECT_EQ(a[1].kind, DimKind::Sequence);
  EXPECT_EQ(a[1].input, "input_ids");
}

// A float [batch, sequence] input is a waveform: its length is samples, long enough for
// a speech model's frames (a VAD's 256-sample window does not fit in 128). A float mask
// sharing its symbol with token ids stays a token sequence.
TEST(DimDefaults, AWaveformsLengthIsSamples) {
  auto a = assume_dims({{"input", DType::Float32, dims({sym("batch"), sym("sequence")})},
                        {"sr", DType::Int64, dims({})}},
                       {});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].kind, DimKind::Samples);
  EXPECT_EQ(a[1].value, 16000);
  EXPECT_STREQ(dim_kind_name(a[1].kind), "samples");
  auto b = values(assume_dims({{"mask", DType::Float32, dims({sym("batch"), sym("seq")})},
                               {"ids", DType::Int64, dims({sym("batch"), sym("seq")})}},
                              {}));
  EXPECT_EQ(b["seq"], 128);
  auto c =
      values(assume_dims({{"x", DType::Float32, dims({sym("time"), sym("batch"), num(40)})}}, {}));
  EXPECT_EQ(c["time"], 128);  // [time, batch, features]: a feature sequence
}

TEST(DimDefaults, PositionsWhenNamesSayNothing) {
  std::vector<InputSignature> in = {
      {"x", DType::Float32,
       dims({sym("p2o.DynamicDimension.0"), num(3), sym("unk__1"), sym("unk__2")})},
      {"ids", DType::Int64, dims({sym("d0"), sym("d1")})},
      {"feat", DType::Float32, dims({sym("d0"), sym("f1"), num(256)})},
      {"v", DType::Float32, dims({sym("only")})}};
  auto a = values(assume_dims(in, {}));
  EXPECT_EQ(a["p2o.DynamicDimension.0"], 1);
  EXPECT_EQ(a["unk__1"], 224);
  EXPECT_EQ(a["unk__2"], 224);
  EXPECT_EQ(a["d0"], 1);  // first seen on ids, axis 0
  EXPECT_EQ(a["d1"], 128);
  EXPECT_EQ(a["f1"], 128);
  EXPECT_EQ(a["only"], 64);  // nothing to go by: the stated default
}

TEST(DimDefaults, BoundDimsAreNotAssumedAndSiblingsSetTheImageSize) {
  std::vector<InputSignature> in = {
      {"a", DType::Float32, dims({sym("batch"), num(3), sym("h"), sym("w")})},
      {"b", DType::Float32, dims({num(1), num(3), num(320), num(480)})}};
  auto a = assume_dims(in, {{"batch", 4}});
  EXPECT_EQ(values(a), (std::map<std::string, int64_t>{{"h", 320}, {"w", 480}}));
  EXPECT_EQ(assumed_dims_text(a), "assumed: h=320, w=480; bind with --dim NAME=V");
  EXPECT_EQ(assumed_dims_text({}), "");
}

TEST(DimDefaults, OtherDefaultsAreOptions) {
  DimDefaults d;
  d.sequence = 77;
  std::vector<InputSignature> in = {{"ids", DType::Int64, dims({sym("batch"), sym("seq")})}};
  EXPECT_EQ(values(assume_dims(in, {}, d))["seq"], 77);
}

}  // namespace
}  // namespace fx::transforms
