// SPDX-License-Identifier: Apache-2.0
#pragma once
// Groups that are legal only at an assumed dimension. A group's kinds and dtypes do not
// depend on any dimension; its on-chip footprint does, through the rows a reduction
// holds (a Softmax over the sequence, a pooling over height x width) and anchor tiles
// smaller than the tile cap. A group whose footprint fits at the assumed value may not
// fit at the value the model runs with. So the caller analyses the model again with one
// assumed dim bound to a probe value (kAssumedProbeFactor times the assumed one: a
// deployed length or size is often an order of magnitude over the default), and each
// group the probe refuses as over capacity gets a note naming the dim:
//
//   legal for the assumed seq=128 (over on-chip capacity at seq=2048); rebind to check
//
// Other groups' legality does not depend on an assumed value, and they carry no note.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/analysis_result.h"

namespace fx {

inline constexpr int64_t kAssumedProbeFactor = 16;

// Group id -> note, as `fxc analyze` prints it and its JSON carries it ("assumed_note").
using AssumedNotes = std::map<std::string, std::string>;

// Adds to `notes` the note of each group of `r` (analysed with symbol = assumed) that
// `at_probe` (the same model and options with symbol = probe) refuses as over capacity:
// a pair of its members is not fused there for OverCapacity. Notes of several dims on
// one group join with "; ".
void note_assumed_legality(const AnalysisResult& r, const std::string& symbol, int64_t assumed,
                           int64_t probe, const AnalysisResult& at_probe, AssumedNotes& notes);

// The same for a probe that bound several assumed dims at once (one reading and one
// analysis however many dims the model has: the explorer's check). The note names them
// all, as the single-dim note names one:
//   legal for the assumed batch=1, seq=128 (over on-chip capacity at batch=16, seq=2048); ...
struct AssumedProbe {
  std::string symbol;
  int64_t assumed = 0, probe = 0;
};
void note_assumed_legality(const AnalysisResult& r, const std::vector<AssumedProbe>& dims,
                           const AnalysisResult& at_probe, AssumedNotes& notes);

// Sets each group's FusionGroup::assumed_note from `notes` (so that plans and reports
// made from the groups carry it).
void apply_assumed_notes(std::vector<FusionGroup>& groups, const AssumedNotes& notes);

}  // namespace fx
