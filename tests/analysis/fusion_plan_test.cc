// SPDX-License-Identifier: Apache-2.0
#include "analysis/fusion_plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "analysis/fusion_finder.h"
#include "test_graphs.h"
#include "util/error.h"

namespace fx {
namespace {

// Two independent chains, each fused into one group at level 2.
Graph two_chains(bool with_second = true) {
  GraphBuilder b;
  auto x = b.input("x", {1024});
  b.output(b.op("Neg", {b.op("Relu", {x}, {}, "a1")}, {}, "a2"));
  if (with_second) b.output(b.op("Exp", {b.op("Abs", {x}, {}, "b1")}, {}, "b2"));
  return b.build();
}

FusionPlan plan_for(const Graph& g) {
  FusionOptions o;
  o.opt_level = 2;
  o.threshold = 0.3;
  return FusionPlan(analyze_fusion(g, testing::test_profile(), o), "model.onnx");
}

TEST(FusionPlan, StartsAsCandidates) {
  Graph g = two_chains();
  FusionPlan p = plan_for(g);
  ASSERT_EQ(p.groups().size(), 2u);
  for (const auto& gr : p.groups()) EXPECT_EQ(gr.status, GroupStatus::Candidate);
  EXPECT_EQ(p.device(), "test-device");
  EXPECT_TRUE(p.accepted().empty());
}

TEST(FusionPlan, AcceptRejectUndoRedo) {
  Graph g = two_chains();
  FusionPlan p = plan_for(g);
  const std::string a = p.groups()[0].id, b = p.groups()[1].id;
  EXPECT_FALSE(p.can_undo());
  EXPECT_TRUE(p.accept(a, "looks good"));
  EXPECT_FALSE(p.accept(a, "looks good"));  // no-op: nothing recorded
  EXPECT_TRUE(p.reject(b, "bad tiling"));
  EXPECT_FALSE(p.accept("fg-nothere"));
  EXPECT_EQ(p.find(a)->status, GroupStatus::Accepted);
  EXPECT_EQ(p.find(b)->reason, "bad tiling");
  ASSERT_TRUE(p.undo());
  EXPECT_EQ(p.find(b)->status, GroupStatus::Candidate);
  EXPECT_EQ(p.find(a)->status, GroupStatus::Accepted);
  ASSERT_TRUE(p.undo());
  EXPECT_EQ(p.find(a)->status, GroupStatus::Candidate);
  EXPECT_FALSE(p.undo());
  ASSERT_TRUE(p.redo());
  EXPECT_EQ(p.find(a)->status, GroupStatus::Accepted);
  // A new decision clears the redo stack.
  EXPECT_TRUE(p.reset(a));
  EXPECT_FALSE(p.can_redo());
}

TEST(FusionPlan, AcceptAllAboveIsOneUndoStep) {
  Graph g = two_chains();
  FusionPlan p = plan_for(g);
  EXPECT_EQ(p.accept_all_above(0.99), 0);  // 50% reduction each: none qualifies
  EXPECT_EQ(p.accept_all_above(0.5), 2);
  EXPECT_EQ(p.accepted().size(), 2u);
  ASSERT_TRUE(p.undo());
  EXPECT_TRUE(p.accepted().empty());
}

TEST(FusionPlan, JsonRoundTrip) {
  Graph g = two_chains();
  FusionPlan p = plan_for(g);
  p.accept(p.groups()[0].id, "ok");
  p.reject(p.groups()[1].id, "no");
  EXPECT_FALSE(p.to_json().contains("disabled_passes"));  // none: no key
  p.set_disabled_passes({"conv-bn-folding", "shape-folding"});
  nlohmann::json j = p.to_json();
  EXPECT_EQ(j["schema_version"], FusionPlan::kSchemaVersion);
  FusionPlan q = FusionPlan::from_json(j);
  EXPECT_EQ(q.disabled_passes(), (std::vector<std::string>{"conv-bn-folding", "shape-folding"}));
  ASSERT_EQ(q.groups().size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(q.groups()[i].id, p.groups()[i].id);
    EXPECT_EQ(q.groups()[i].nodes, p.groups()[i].nodes);
    EXPECT_EQ(q.groups()[i].status, p.groups()[i].status);
    EXPECT_EQ(q.groups()[i].reason, p.groups()[i].reason);
    EXPECT_EQ(q.groups()[i].estimate.bytes_saved(), p.groups()[i].estimate.bytes_saved());
  }
  EXPECT_EQ(q.model(), "model.onnx");
  EXPECT_EQ(q.to_json(), j);

  auto path =
      std::filesystem::temp_directory_path() / ("plan_" + std::to_string(::getpid()) + ".json");
  p.save(path.string());
  EXPECT_EQ(FusionPlan::load(path.string()).to_json(), j);
  std::filesystem::remove(path);
}

TEST(FusionPlan, RejectsUnknownSchemaAndBadFiles) {
  nlohmann::json j = plan_for(two_chains()).to_json();
  j["schema_version"] = 99;
  EXPECT_THROW(FusionPlan::from_json(j), Error);
  EXPECT_THROW(FusionPlan::load("/nonexistent/plan.json"), FileError);
}

TEST(FusionPlan, BindAgainstChangedModelReportsUnknownNodes) {
  FusionPlan p = plan_for(two_chains(true));
  Graph changed = two_chains(false);  // b1, b2 are gone
  auto missing = p.bind(changed);
  EXPECT_EQ(testing::sorted(missing), testing::sorted({"b1", "b2"}));
  ASSERT_EQ(p.groups().size(), 1u);
  EXPECT_EQ(p.groups()[0].nodes, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(p.groups()[0].node_ids[0], changed.find_node("a1"));
  EXPECT_EQ(p.dropped_groups().size(), 1u);
}

}  // namespace
}  // namespace fx
