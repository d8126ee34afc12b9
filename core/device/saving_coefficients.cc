// SPDX-License-Identifier: Apache-2.0
#include "device/saving_coefficients.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace fx {
namespace {

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// Field readers that name the field on a wrong type: the profile is a user-editable file.
[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw Error("device profile: " + field + " " + what);
}

double finite_number(const nlohmann::json& j, const std::string& field) {
  if (!j.is_number() || !std::isfinite(j.get<double>())) bad(field, "must be a finite number");
  return j.get<double>();
}

int non_negative_int(const nlohmann::json& j, const std::string& field) {
  if (!j.is_number_integer() || j.get<int64_t>() < 0) bad(field, "must be a non-negative integer");
  return j.get<int>();
}

// "(a, b, ...)" of n names, for the message naming what a field may hold.
template <class Name>
std::string one_of(int n, Name name) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::string(name(i));
  return s + ")";
}

double number_or_nan(const nlohmann::json& obj, const char* key, const std::string& field) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return NAN;
  return finite_number(*it, field + "." + key);
}

}  // namespace

const char* saving_term_name(int i) {
  static const char* names[kSavingTerms] = {
      "members",    "traffic",       "launches",       "anchor_relayout", "anchor_compute",
      "fused_cost", "anchor_memory", "anchor_weights", "anchor_planes",   "fused_fixed"};
  return i >= 0 && i < kSavingTerms ? names[i] : "?";
}

bool SavingCoefficients::any_fitted() const {
  for (const auto& c : classes)
    if (c.fitted) return true;
  return false;
}

std::string saving_source_label(const SavingCoefficients& m, KernelClass c) {
  const SavingClassFit& f = m.of(c);
  if (f.fitted)
    return fmt::format("saving model (class {}, fitted to {} groups{}{})", kernel_class_name(c),
                       f.groups, m.fitted_to.empty() ? "" : "; ", m.fitted_to);
  if (m.groups == 0) return "difference of kernel times";
  return fmt::format("difference of kernel times (saving model not fitted for class {}: {})",
                     kernel_class_name(c), f.groups == 0 ? "no measured groups" : f.why);
}

nlohmann::json to_json(const SavingCoefficients& m) {
  nlohmann::json classes = nlohmann::json::object();
  for (int c = 0; c < kKernelClassCount; ++c) {
    const SavingClassFit& f = m.classes[static_cast<std::size_t>(c)];
    if (f.groups == 0 && !f.fitted) continue;
    nlohmann::json coef = nlohmann::json::object();
    for (int i = 0; i < kSavingTerms; ++i) coef[saving_term_name(i)] = f.coefficients[i];
    classes[kernel_class_name(static_cast<KernelClass>(c))] = {
        {"groups", f.groups},
        {"fitted", f.fitted},
        {"why_not_fitted", f.why},
        {"coefficients", coef},
        {"leave_one_out_error", number_or_null(f.leave_one_out_error)},
        {"difference_of_times_error", number_or_null(f.difference_error)}};
  }
  return {{"fitted_to", m.fitted_to}, {"groups", m.groups}, {"classes", classes}};
}

SavingCoefficients saving_coefficients_from_json(const nlohmann::json& j) {
  const std::string root = "saving_model";
  if (!j.is_object()) bad(root, "must be an object");
  SavingCoefficients m;
  if (auto it = j.find("fitted_to"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) bad(root + ".fitted_to", "must be a string");
    m.fitted_to = it->get<std::string>();
  }
  if (auto it = j.find("groups"); it != j.end() && !it->is_null())
    m.groups = non_negative_int(*it, root + ".groups");
  auto classes = j.find("classes");
  if (classes == j.end() || classes->is_null()) return m;
  if (!classes->is_object()) bad(root + ".classes", "must be an object");
  for (const auto& [key, cj] : classes->items()) {
    const std::string field = root + ".classes." + key;
    auto c = kernel_class_from_name(key);
    if (!c)
      bad(field, "is not a kernel class " + one_of(kKernelClassCount, [](int i) {
                   return kernel_class_name(static_cast<KernelClass>(i));
                 }));
    if (!cj.is_object()) bad(field, "must be an object");
    SavingClassFit& f = m.classes[static_cast<std::size_t>(*c)];
    if (auto it = cj.find("groups"); it != cj.end())
      f.groups = non_negative_int(*it, field + ".groups");
    auto fitted = cj.find("fitted");
    if (fitted == cj.end() || !fitted->is_boolean())
      bad(field + ".fitted", "must be true or false");
    f.fitted = fitted->get<bool>();
    if (auto it = cj.find("why_not_fitted"); it != cj.end() && !it->is_null()) {
      if (!it->is_string()) bad(field + ".why_not_fitted", "must be a string");
      f.why = it->get<std::string>();
    }
    auto coef = cj.find("coefficients");
    if (coef != cj.end() && !coef->is_null()) {
      if (!coef->is_object()) bad(field + ".coefficients", "must be an object");
      for (const auto& [term, v] : coef->items()) {
        int i = 0;
        while (i < kSavingTerms && term != saving_term_name(i)) ++i;
        if (i == kSavingTerms)
          bad(field + ".coefficients." + term,
              "is not a saving-model term " + one_of(kSavingTerms, saving_term_name));
        f.coefficients[i] = finite_number(v, field + ".coefficients." + term);
      }
    }
    if (f.fitted) {
      // A fitted class predicts with every coefficient: none of those every profile has
      // may be left to a default (the later terms default to 0: fits made without them).
      for (int i = 0; i < kSavingTermsRequired; ++i)
        if (coef == cj.end() || coef->is_null() || !coef->contains(saving_term_name(i)))
          bad(field + ".coefficients." + saving_term_name(i), "is missing (the class is fitted)");
    }
    f.leave_one_out_error = number_or_nan(cj, "leave_one_out_error", field);
    f.difference_error = number_or_nan(cj, "difference_of_times_error", field);
  }
  return m;
}

}  // namespace fx
