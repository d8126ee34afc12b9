// SPDX-License-Identifier: Apache-2.0
#pragma once
// The saving model's fitted coefficients (saving_model.h), as a device profile carries
// them: `fxc calibrate --from` fits them to measured group savings and saves them with
// the kernel rates, and analysis predicts each group's time saved with them (for the
// classes that kept their fit) instead of the difference of predicted kernel times.
//
// JSON (the profile's "saving_model"; absent in profiles written before it):
//   { "fitted_to": "2026-11-24, 57 measured group savings of r18.json, r50.json (fxc
//                    calibrate --from)",
//     "groups": 57,
//     "classes": { "conv": { "groups": 20, "fitted": true, "why_not_fitted": "",
//                            "coefficients": { "members": 0.9, "traffic": 0.4,
//                                              "launches": 1.2, "anchor_relayout": 0.3,
//                                              "anchor_compute": 0.05, "fused_cost": 1.1,
//                                              "anchor_memory": 0.1, "anchor_weights": 0.2,
//                                              "anchor_planes": 0.3, "fused_fixed": 1.5 },
//                            "leave_one_out_error": 0.11,
//                            "difference_of_times_error": 0.23 }, ... } }
// A class absent from "classes" has no fit (the difference of times is used).

#include <array>
#include <cmath>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "device/kernel_class.h"

namespace fx {

inline constexpr int kSavingTerms = 10;
// "members", "traffic", "launches", "anchor_relayout", "anchor_compute", "fused_cost",
// "anchor_memory", "anchor_weights", "anchor_planes", "fused_fixed".
const char* saving_term_name(int i);
// Profiles written before the last four terms carry only the first six: a fitted class
// must have those; the others default to 0 (what those fits amounted to).
inline constexpr int kSavingTermsRequired = 6;

struct SavingClassFit {
  int groups = 0;
  bool fitted = false;  // false: the difference of times is used (see why)
  std::string why;      // when not fitted: "too few groups" or "not better leaving groups out"
  std::array<double, kSavingTerms> coefficients{1, 0, 0, 0, 0, 1, 0, 0, 0, 0};
  // Median relative errors on the class's groups, each left out of its own fit, and of
  // the difference of kernel times (NaN when not computed).
  double leave_one_out_error = NAN, difference_error = NAN;
};

struct SavingCoefficients {
  std::array<SavingClassFit, kKernelClassCount> classes{};
  int groups = 0;         // groups the fit saw, all classes together (0: never fitted)
  std::string fitted_to;  // the data and the date the coefficients were fitted to

  const SavingClassFit& of(KernelClass c) const { return classes[static_cast<std::size_t>(c)]; }
  bool any_fitted() const;
};

// What predicts a group's time saved when the fused kernel is of class `c`: "saving model
// (class conv, fitted to 20 groups; <fitted_to>)", or "difference of kernel times", with
// why the class has no fit when the profile carries a saving model.
std::string saving_source_label(const SavingCoefficients& m, KernelClass c);

nlohmann::json to_json(const SavingCoefficients& m);
// Throws fx::Error naming the field, e.g. "saving_model.classes.conv.coefficients.traffic
// must be a finite number".
SavingCoefficients saving_coefficients_from_json(const nlohmann::json& j);

}  // namespace fx
