// SPDX-License-Identifier: Apache-2.0
// Groups legal only at an assumed dimension say so (analysis/assumed_legality.h): a
// Softmax row grows with the sequence; the same graph at the probe sequence no longer
// fits on chip.
#include "analysis/assumed_legality.h"

#include <gtest/gtest.h>

#include "analysis/fusion_finder.h"
#include "test_graphs.h"

namespace fx {
namespace {

// x[1, 4, seq] -> Mul(scale) -> Softmax(last axis) -> Relu: the Softmax holds a row of seq.
Graph scaled_softmax(int64_t seq) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, seq});
  auto s = b.constant("scale", TensorData::from_floats({}, {0.125f}));
  auto m = b.op("Mul", {x, s}, {}, "mul");
  auto sm = b.op("Softmax", {m}, {{"axis", int64_t(-1)}}, "softmax");
  b.output(b.op("Relu", {sm}, {}, "relu"));
  return b.build();
}

// A pair of graphs with no reduction row: x[1, seq] -> Relu -> Neg.
Graph chain(int64_t seq) {
  GraphBuilder b;
  auto x = b.input("x", {1, seq});
  b.output(b.op("Neg", {b.op("Relu", {x}, {}, "relu")}, {}, "neg"));
  return b.build();
}

AnalysisResult analyse(const Graph& g, const DeviceProfile& p) {
  FusionOptions o;
  o.opt_level = 2;
  o.threshold = 0;
  return analyze_fusion(g, p, o);
}

TEST(AssumedLegality, AGroupThatFitsOnlyAtTheAssumedSequenceSaysSo) {
  const int64_t assumed = 128, probe = assumed * kAssumedProbeFactor;
  const Graph small = scaled_softmax(assumed), large = scaled_softmax(probe);
  // The footprints with room to spare, then a chip whose limit lies between them.
  DeviceProfile p = testing::test_profile();
  p.onchip_capacity_bytes = int64_t(1) << 40;
  const AnalysisResult roomy_small = analyse(small, p), roomy_large = analyse(large, p);
  ASSERT_EQ(roomy_small.groups.size(), 1u);
  ASSERT_EQ(roomy_large.groups.size(), 1u);
  const int64_t fits = roomy_small.groups[0].estimate.footprint_bytes,
                too_big = roomy_large.groups[0].estimate.footprint_bytes;
  ASSERT_LT(fits, too_big);  // the row grows with the sequence
  p.onchip_capacity_bytes = int64_t(double(fits + too_big) / 2 / FusionOptions{}.capacity_fraction);

  AnalysisResult r = analyse(small, p);
  const AnalysisResult at_probe = analyse(large, p);
  ASSERT_EQ(r.groups.size(), 1u);
  for (const auto& g : at_probe.groups) EXPECT_NE(g.id, r.groups[0].id);  // split or gone
  AssumedNotes notes;
  note_assumed_legality(r, "seq", assumed, probe, at_probe, notes);
  EXPECT_EQ(notes, (AssumedNotes{{r.groups[0].id,
                                  "legal for the assumed seq=128 (over on-chip capacity at "
                                  "seq=2048); rebind to check"}}));
  // A second dim that changes nothing adds nothing.
  note_assumed_legality(r, "batch", 1, 16, analyse(small, p), notes);
  EXPECT_EQ(notes[r.groups[0].id].find("batch"), std::string::npos);
  // One probe with several dims bound at once (the explorer's single reading): the note
  // names each dim at its assumed and its probe value.
  AssumedNotes joint;
  note_assumed_legality(r, {{"batch", 1, 16}, {"seq", assumed, probe}}, at_probe, joint);
  EXPECT_EQ(joint, (AssumedNotes{{r.groups[0].id,
                                  "legal for the assumed batch=1, seq=128 (over on-chip capacity "
                                  "at batch=16, seq=2048); rebind to check"}}));

  // With room at the probe value too, the group carries no note.
  p.onchip_capacity_bytes = int64_t(1) << 40;
  AssumedNotes none;
  note_assumed_legality(analyse(small, p), "seq", assumed, probe, analyse(large, p), none);
  EXPECT_TRUE(none.empty());
}

// An elementwise chain's footprint is one tile whatever the length: no note.
TEST(AssumedLegality, ElementwiseGroupsDoNotDependOnTheLength) {
  DeviceProfile p = testing::test_profile();
  AnalysisResult r = analyse(chain(128), p);
  ASSERT_EQ(r.groups.size(), 1u);
  AssumedNotes notes;
  note_assumed_legality(r, "seq", 128, 2048, analyse(chain(2048), p), notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(r.groups[0].estimate.footprint_bytes,
            analyse(chain(2048), p).groups[0].estimate.footprint_bytes);
}

}  // namespace
}  // namespace fx
