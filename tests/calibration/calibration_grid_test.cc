// SPDX-License-Identifier: Apache-2.0
// The calibration grid (calibration/calibration_grid.h): its sizes follow the machine's
// caches, and the analysis forms fused groups of every kernel family in it, so that the
// grid measures the fused saving per class. (Timing it is `fxc calibrate`, in bench/.)

#include "calibration/calibration_grid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/fusion_finder.h"
#include "calibration/grid_calibration.h"

namespace fx {
namespace {

TEST(CalibrationGrid, SizesFollowTheCaches) {
  CacheSizes small{32 << 10, 512 << 10, 8 << 20};
  CacheSizes big{48 << 10, 2 << 20, 96 << 20};
  auto s = memory_grid_sizes(small);
  auto b = memory_grid_sizes(big);
  EXPECT_NE(s, b);
  EXPECT_EQ(s, (std::vector<int64_t>{256, 16 << 10, 256 << 10, 4 << 20, 16 << 20}));
  EXPECT_EQ(b.back(), kMaxGridTensorBytes);  // twice L3 is capped
}

TEST(CalibrationGrid, EveryFamilyFormsFusedGroupsOfItsClasses) {
  DeviceProfile p;
  p.name = "grid-test";
  p.memory_bandwidth_bytes_per_s = 20e9;
  p.peak_flops = 200e9;
  p.launch_overhead_s = 2e-6;
  p.onchip_capacity_bytes = 1 << 20;
  const auto grid = calibration_grid(CacheSizes{32 << 10, 512 << 10, 8 << 20});
  ASSERT_EQ(grid.size(), 3u);
  std::set<std::string> classes;
  for (const auto& fam : grid) {
    for (std::size_t i = 0; i < fam.graph.node_count(); ++i)
      for (ValueId v : fam.graph.node(NodeId(i)).outputs)
        EXPECT_TRUE(fam.graph.value(v).shape.is_static()) << fam.name;
    FusionOptions o;
    o.opt_level = 2;
    o.threshold = 0;
    AnalysisResult r = analyze_fusion(fam.graph, p, o);
    EXPECT_GE(r.groups.size(), 4u) << fam.name;
    for (const auto& g : r.groups) classes.insert(g.estimate.fused_class);
  }
  for (const char* c : {"elementwise", "reduction", "conv", "depthwise", "matmul"})
    EXPECT_TRUE(classes.count(c)) << c;
  const auto ops = grid_op_types(grid);
  for (const char* op : {"Conv", "MatMul", "Gemm", "Softmax", "Transpose", "MaxPool"})
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), std::string(op))) << op;
}

// The copy curve's buffers bracket each cache level, and the profile's curve counts the
// bytes a copy touches (both buffers) in ascending order, skipping failed points.
TEST(CalibrationGrid, CopyCurveBracketsEachCacheLevel) {
  CacheSizes c{32 << 10, 1 << 20, 32 << 20};
  auto s = copy_curve_sizes(c);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  for (int64_t level : {c.l1d, c.l2, c.l3}) {
    EXPECT_TRUE(std::count(s.begin(), s.end(), level)) << level;
    EXPECT_TRUE(std::count(s.begin(), s.end(), level / 2)) << level;
  }
  EXPECT_LE(s.back(), kMaxGridTensorBytes);
  BandwidthCurve b = bandwidth_curve_of(
      {{16 << 10, 300e9, 0.01}, {1 << 20, NAN, NAN}, {32 << 20, 40e9, 0.02}, {64 << 20, 10e9, 0}});
  ASSERT_EQ(b.points.size(), 3u);
  EXPECT_EQ(b.points[0], std::make_pair(double(32 << 10), 300e9));
  EXPECT_EQ(b.points[2], std::make_pair(double(128 << 20), 10e9));
  EXPECT_TRUE(bandwidth_curve_of({{16 << 10, 300e9, 0}}).empty());
}

}  // namespace
}  // namespace fx
