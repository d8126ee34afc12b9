// SPDX-License-Identifier: Apache-2.0
// The saving model's coefficients as a device profile carries them (saving_coefficients.h):
// they survive a save and a load, older profiles without them still load, and a malformed
// value is an error naming the file and the field.

#include "device/saving_coefficients.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "device/device_presets.h"
#include "util/error.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

SavingClassFit& cls(DeviceProfile& p, KernelClass c) {
  return p.saving_model.classes[static_cast<std::size_t>(c)];
}

// A profile as `fxc calibrate --from` saves it: conv fitted, reduction not (too few groups).
DeviceProfile calibrated_profile() {
  DeviceProfile p = preset_nvidia_h100();
  p.calibrated = true;
  p.calibration = "fitted to test kernels";
  p.saving_model.groups = 27;
  p.saving_model.fitted_to = "2026-11-24, 27 measured group savings of a.json";
  SavingClassFit& conv = cls(p, KernelClass::Conv);
  conv.groups = 20;
  conv.fitted = true;
  conv.coefficients = {0.9, 0.4, 1.25, 0.3, -0.05, 1.1, 0.2, -0.1, 0.07};
  conv.leave_one_out_error = 0.11;
  conv.difference_error = 0.23;
  SavingClassFit& red = cls(p, KernelClass::Reduction);
  red.groups = 7;
  red.why = "too few groups";
  return p;
}

std::string write(const fs::path& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump(2);
  return path.string();
}

// One folder per test process (ctest runs each test in its own), removed when the process
// ends so that runs do not leave one folder each behind.
const fs::path& temp_dir() {
  static const struct Dir {
    fs::path path =
        fs::temp_directory_path() / ("fx_saving_coefficients_" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

TEST(SavingCoefficients, ProfileRoundTripKeepsEveryClassFit) {
  const DeviceProfile p = calibrated_profile();
  const std::string path = (temp_dir() / "fitted.json").string();
  save_device_profile(p, path);
  const DeviceProfile q = load_device_profile(path);
  EXPECT_EQ(q.saving_model.groups, 27);
  EXPECT_EQ(q.saving_model.fitted_to, p.saving_model.fitted_to);
  EXPECT_TRUE(q.saving_model.any_fitted());
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto& a = p.saving_model.classes[c];
    const auto& b = q.saving_model.classes[c];
    EXPECT_EQ(b.groups, a.groups) << c;
    EXPECT_EQ(b.fitted, a.fitted) << c;
    EXPECT_EQ(b.why, a.why) << c;
    for (int i = 0; i < kSavingTerms; ++i) EXPECT_DOUBLE_EQ(b.coefficients[i], a.coefficients[i]);
    EXPECT_EQ(std::isnan(b.leave_one_out_error), std::isnan(a.leave_one_out_error));
  }
  EXPECT_DOUBLE_EQ(q.saving_model.of(KernelClass::Conv).leave_one_out_error, 0.11);
  EXPECT_DOUBLE_EQ(q.saving_model.of(KernelClass::Conv).difference_error, 0.23);
  // The JSON names the terms, so that a reader can check a prediction by hand.
  const nlohmann::json j = to_json(p);
  EXPECT_DOUBLE_EQ(j["saving_model"]["classes"]["conv"]["coefficients"]["launches"].get<double>(),
                   1.25);
  EXPECT_EQ(j["saving_model"]["classes"]["reduction"]["why_not_fitted"], "too few groups");
  EXPECT_FALSE(j["saving_model"]["classes"].contains("matmul"));  // never measured
}

TEST(SavingCoefficients, ProfilesWithoutASavingModelStillLoad) {
  // Presets and profiles written before the saving model: no key, no model.
  const nlohmann::json j = to_json(preset_nvidia_h100());
  EXPECT_FALSE(j.contains("saving_model"));
  const DeviceProfile q = device_profile_from_json(j);
  EXPECT_EQ(q.saving_model.groups, 0);
  EXPECT_FALSE(q.saving_model.any_fitted());
  EXPECT_EQ(saving_source_label(q.saving_model, KernelClass::Conv), "difference of kernel times");
  nlohmann::json n = j;
  n["saving_model"] = nullptr;
  EXPECT_FALSE(device_profile_from_json(n).saving_model.any_fitted());
}

TEST(SavingCoefficients, LabelsNameTheModelBehindAnEstimate) {
  const DeviceProfile p = calibrated_profile();
  EXPECT_EQ(saving_source_label(p.saving_model, KernelClass::Conv),
            "saving model (class conv, fitted to 20 groups; 2026-11-24, 27 measured group "
            "savings of a.json)");
  EXPECT_EQ(saving_source_label(p.saving_model, KernelClass::Reduction),
            "difference of kernel times (saving model not fitted for class reduction: too few "
            "groups)");
  EXPECT_EQ(saving_source_label(p.saving_model, KernelClass::MatMul),
            "difference of kernel times (saving model not fitted for class matmul: no measured "
            "groups)");
}

// Loads `j` from a file and returns the error message (empty when it loads).
std::string load_error(const nlohmann::json& j, const std::string& name) {
  const std::string path = write(temp_dir() / name, j);
  try {
    load_device_profile(path);
  } catch (const FileError& e) {
    EXPECT_EQ(e.path(), path);
    return e.what();
  }
  return {};
}

TEST(SavingCoefficients, MalformedValuesAreErrorsNamingTheFileAndField) {
  const nlohmann::json good = to_json(calibrated_profile());
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    return j;
  };
  struct Case {
    nlohmann::json doc;
    std::string field;
  };
  const std::vector<Case> cases = {
      {with([](auto& j) { j["saving_model"] = "yes"; }), "saving_model must be an object"},
      {with([](auto& j) { j["saving_model"]["classes"]["conv"]["coefficients"]["traffic"] = "x"; }),
       "saving_model.classes.conv.coefficients.traffic must be a finite number"},
      {with(
           [](auto& j) { j["saving_model"]["classes"]["conv"]["coefficients"].erase("launches"); }),
       "saving_model.classes.conv.coefficients.launches is missing"},
      {with([](auto& j) { j["saving_model"]["classes"]["conv"]["coefficients"]["warp"] = 1; }),
       "saving_model.classes.conv.coefficients.warp is not a saving-model term"},
      {with([](auto& j) { j["saving_model"]["classes"]["conv"]["fitted"] = "yes"; }),
       "saving_model.classes.conv.fitted must be true or false"},
      {with([](auto& j) {
         j["saving_model"]["classes"]["gpu_magic"] = {{"fitted", false}};
       }),
       "saving_model.classes.gpu_magic is not a kernel class"},
      {with([](auto& j) { j["saving_model"]["classes"]["conv"]["groups"] = -3; }),
       "saving_model.classes.conv.groups must be a non-negative integer"},
      {with([](auto& j) { j["saving_model"]["classes"]["conv"]["leave_one_out_error"] = "low"; }),
       "saving_model.classes.conv.leave_one_out_error must be a finite number"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string name = "bad" + std::to_string(i++) + ".json";
    const std::string msg = load_error(c.doc, name);
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.field), std::string::npos) << msg;
  }
  // A profile fitted before the anchor_memory, anchor_weights and anchor_planes terms
  // loads with them at 0 (its predictions unchanged); the first six stay required.
  nlohmann::json older = good;
  for (const char* t : {"anchor_memory", "anchor_weights", "anchor_planes"})
    older["saving_model"]["classes"]["conv"]["coefficients"].erase(t);
  const std::string older_path = write(temp_dir() / "older.json", older);
  const SavingClassFit conv = load_device_profile(older_path).saving_model.of(KernelClass::Conv);
  EXPECT_TRUE(conv.fitted);
  EXPECT_DOUBLE_EQ(conv.coefficients[5], 1.1);
  for (int i = kSavingTermsRequired; i < kSavingTerms; ++i)
    EXPECT_EQ(conv.coefficients[i], 0.0) << saving_term_name(i);
  // An unfitted class may leave its coefficients out (they are not used).
  nlohmann::json j = good;
  j["saving_model"]["classes"]["reduction"].erase("coefficients");
  EXPECT_EQ(load_error(j, "ok.json"), "");
}

}  // namespace
}  // namespace fx
