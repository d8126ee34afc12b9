// SPDX-License-Identifier: Apache-2.0
#pragma once
// BeforeAfterResult as the JSON of docs/before_after.md (what `fxc profile --plan ...
// --json` prints, and what the report, the GUI and `fxc calibrate --from` read).
// Unknown numbers (NaN) are written as null.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "profile/before_after.h"

namespace fx {

// What the result does not know itself: where it came from.
struct BeforeAfterMeta {
  std::string model;
  std::string plan;    // "" when the plan came from --opt-level
  int opt_level = -1;  // -1 with --plan
  uint64_t seed = 0;
};

nlohmann::json before_after_json(const BeforeAfterResult& result, const BeforeAfterMeta& meta);

// One kernel's cost-model terms, as each kernel row's "cost" object (what `fxc calibrate`
// fits the rates to).
nlohmann::json kernel_terms_json(const KernelTerms& terms);

}  // namespace fx
