// SPDX-License-Identifier: Apache-2.0
// The pointwise_depthwise seed pattern (analysis/pointwise_depthwise.h): MobileNetV2's
// expand 1x1 Conv + Clip + depthwise Conv + Clip becomes one group when the expanded
// tensor is large (2 MiB and more), at levels 1 and 2; a small one stays two
// conv_bias_act groups; an expanded tensor read elsewhere, a strided pointwise Conv or
// a grouped Conv that is not depthwise do not match.
#include <gtest/gtest.h>

#include "analysis/fusion_finder.h"
#include "analysis/pointwise_depthwise.h"
#include "test_graphs.h"

namespace fx {
namespace {

using testing::group_of;
using Ints = std::vector<int64_t>;

struct Block {
  int64_t hw = 112, ci = 16, ce = 96, stride = 2;
  int64_t pw_stride = 1, dw_group = 0;  // 0: ce (depthwise)
  bool expanded_read_elsewhere = false;
};

Graph block(const Block& k) {
  GraphBuilder b;
  const int64_t ohw = (k.hw + 2 - 3) / k.stride + 1, ehw = (k.hw - 1) / k.pw_stride + 1;
  auto x = b.input("x", {1, k.ci, k.hw, k.hw});
  auto e =
      b.op("Conv", {x, b.constant("pw_w", testing::zeros({k.ce, k.ci, 1, 1}))},
           {{"strides", Ints{k.pw_stride, k.pw_stride}}}, "pw", Shape::of({1, k.ce, ehw, ehw}));
  auto c = b.op("Clip", {e, testing::scalar(b, "lo", 0.f), testing::scalar(b, "hi", 6.f)}, {},
                "pw_clip", Shape::of({1, k.ce, ehw, ehw}));
  if (k.expanded_read_elsewhere) b.output(c);
  const int64_t group = k.dw_group ? k.dw_group : k.ce;
  auto d =
      b.op("Conv", {c, b.constant("dw_w", testing::zeros({k.ce, k.ce / group, 3, 3}))},
           {{"group", group}, {"strides", Ints{k.stride, k.stride}}, {"pads", Ints{1, 1, 1, 1}}},
           "dw", Shape::of({1, k.ce, ohw, ohw}));
  b.output(b.op("Clip", {d, testing::scalar(b, "lo2", 0.f), testing::scalar(b, "hi2", 6.f)}, {},
                "dw_clip", Shape::of({1, k.ce, ohw, ohw})));
  return b.build();
}

AnalysisResult analyze(const Graph& g, int level) {
  FusionOptions o;
  o.opt_level = level;
  o.threshold = 0;
  return analyze_fusion(g, testing::test_profile(), o);
}

TEST(PointwiseDepthwisePattern, LargeExpansionIsOneGroupAtLevelsOneAndTwo) {
  Graph g = block(Block{});  // 96 x 112 x 112 floats: 4.8 MB expanded
  for (int level : {1, 2}) {
    AnalysisResult r = analyze(g, level);
    const FusionGroup* fg = group_of(r, "pw");
    ASSERT_NE(fg, nullptr) << level;
    EXPECT_EQ(fg->pattern, "pointwise_depthwise");
    EXPECT_EQ(fg->nodes, (std::vector<std::string>{"pw", "pw_clip", "dw", "dw_clip"}));
    // The expanded tensor is written and read once less each way (and its Clip's).
    EXPECT_GE(fg->estimate.bytes_saved(), 2 * 96 * 112 * 112 * 4) << level;
  }
}

TEST(PointwiseDepthwisePattern, SmallExpansionStaysTwoConvGroups) {
  Block k;
  k.hw = 28;  // 301 KB expanded: stays in cache between two kernels
  AnalysisResult r = analyze(block(k), 1);
  ASSERT_NE(group_of(r, "pw"), nullptr);
  EXPECT_EQ(group_of(r, "pw")->pattern, "conv_bias_act");
  EXPECT_NE(group_of(r, "pw"), group_of(r, "dw"));
}

TEST(PointwiseDepthwisePattern, MatcherRejectsOtherShapesOfTheChain) {
  auto matches = [](const Block& k) {
    Graph g = block(k);
    return match_pointwise_depthwise(g, g.find_node("pw")).has_value();
  };
  EXPECT_TRUE(matches(Block{}));
  Block shared;
  shared.expanded_read_elsewhere = true;
  EXPECT_FALSE(matches(shared));
  Block strided;
  strided.pw_stride = 2;
  EXPECT_FALSE(matches(strided));
  Block grouped;
  grouped.dw_group = 48;  // two channels per group: not depthwise
  EXPECT_FALSE(matches(grouped));
  Graph g = block(Block{});
  auto m = match_pointwise_depthwise(g, g.find_node("pw"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pw_lo, 0.f);
  EXPECT_EQ(m->pw_hi, 6.f);
  EXPECT_EQ(m->dw_hi, 6.f);
  EXPECT_EQ(m->out, g.node(g.find_node("dw_clip")).outputs[0]);
}

}  // namespace
}  // namespace fx
