// SPDX-License-Identifier: Apache-2.0
#include "analysis/synthetic_graph.h"

#include <gtest/gtest.h>

#include "analysis/fusion_finder.h"
#include "test_graphs.h"

namespace fx {
namespace {

TEST(SyntheticGraph, ValidDeterministicAndAnalysable) {
  SyntheticGraphOptions o;
  o.node_count = 5000;
  Graph g = make_synthetic_graph(o);
  EXPECT_GE(g.node_count(), 5000u);
  EXPECT_LT(g.node_count(), 5100u);
  EXPECT_NO_THROW(g.validate());
  EXPECT_EQ(make_synthetic_graph(o).node_count(), g.node_count());
  for (const auto& v : g.values())
    if (!v.is_constant()) {
      EXPECT_TRUE(v.shape.is_static()) << v.name;
    }

  FusionOptions fo;
  fo.opt_level = 1;
  AnalysisResult r1 = analyze_fusion(g, testing::test_profile(), fo);
  std::set<std::string> patterns;
  for (const auto& gr : r1.groups) patterns.insert(gr.pattern);
  EXPECT_TRUE(patterns.count("conv_bn_act")) << ::testing::PrintToString(patterns);
  fo.opt_level = 3;
  AnalysisResult r3 = analyze_fusion(g, testing::test_profile(), fo);
  EXPECT_EQ(r3.unknown_cost_nodes, 0);
  EXPECT_LT(r3.kernels_after, r1.kernels_after);
  EXPECT_LE(r3.bytes_after, r1.bytes_after);
}

}  // namespace
}  // namespace fx
