// SPDX-License-Identifier: Apache-2.0
// `fxc analyze --device PROFILE.json` with a profile carrying a calibrated saving model
// (what `fxc calibrate --from` writes): the fitted class's groups are estimated by the
// saving model, each estimate names its model, and a malformed saving model is a one-line
// error naming the file and the field (exit code 2).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace fx {
namespace {

using nlohmann::json;
using testing::run_fxc;

const std::string kModel = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";

// The H100 preset's figures with the conv class fitted to "1 x the launches avoided":
// a conv group's saving is then launches_saved x 5 us, checkable from the JSON alone.
json profile_with_saving_model() {
  json coef = {{"members", 0},         {"traffic", 0},        {"launches", 1},
               {"anchor_relayout", 0}, {"anchor_compute", 0}, {"fused_cost", 0}};
  return {{"name", "h100-fitted"},
          {"source", "e2e test"},
          {"memory_bandwidth_bytes_per_s", 3.0e12},
          {"peak_flops", 7.0e14},
          {"launch_overhead_s", 5e-6},
          {"onchip_capacity_bytes", 233472},
          {"calibrated", true},
          {"saving_model",
           {{"fitted_to", "e2e fixture"},
            {"groups", 12},
            {"classes", {{"conv", {{"groups", 12}, {"fitted", true}, {"coefficients", coef}}}}}}}};
}

std::string write(const std::string& name, const json& j) {
  auto dir = std::filesystem::temp_directory_path() / "fx_saving_model_cli";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << j.dump(2);
  return path;
}

TEST(SavingModelCli, AnalyzeEstimatesFittedClassesWithTheSavingModelAndSaysSo) {
  const std::string prof = write("fitted.json", profile_with_saving_model());
  // With its BNs kept, every group of tiny_cnn has a Conv (folded, HardSwish joins the
  // pooling instead: a reduction group, which the fixture's model does not fit).
  auto r =
      run_fxc({"analyze", kModel, "--device", prof, "--json", "--disable-pass", "conv-bn-folding"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_GE(j["groups"].size(), 2u);
  double saved = 0;
  for (const auto& g : j["groups"]) {
    // tiny_cnn's groups are conv + epilogue kernels: all of the fitted class.
    EXPECT_EQ(g["est_time_saved_by"], "saving model (class conv, fitted to 12 groups; e2e fixture)")
        << g.dump();
    EXPECT_NEAR(g["est_time_saved_us"].get<double>(), g["launches_saved"].get<int>() * 5.0, 1e-6);
    saved += g["est_time_saved_us"].get<double>();
  }
  EXPECT_NEAR(j["est_time_before_us"].get<double>() - j["est_time_after_us"].get<double>(), saved,
              1e-6);

  // The table names the model behind the estimates.
  auto t = run_fxc({"analyze", kModel, "--device", prof});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("by the saving model (class conv, fitted to 12 groups; e2e fixture)"),
            std::string::npos)
      << t.out;

  // The same model without a saving model: the difference of kernel times, said so.
  json plain = profile_with_saving_model();
  plain.erase("saving_model");
  auto p = run_fxc({"analyze", kModel, "--device", write("plain.json", plain), "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  // A named document: a range-for over a member of a temporary reads it after it is freed.
  json p_doc = json::parse(p.out);
  for (const auto& g : p_doc["groups"])
    EXPECT_EQ(g["est_time_saved_by"], "difference of kernel times");
}

TEST(SavingModelCli, MalformedSavingModelIsAnErrorNamingFileAndField) {
  json bad = profile_with_saving_model();
  bad["saving_model"]["classes"]["conv"]["coefficients"]["traffic"] = "high";
  const std::string prof = write("bad.json", bad);
  auto r = run_fxc({"analyze", kModel, "--device", prof});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(prof), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("saving_model.classes.conv.coefficients.traffic must be a finite number"),
            std::string::npos)
      << r.err;
}

TEST(SavingModelCli, CalibratingDropsTheBaseProfilesSavingModel) {
  // The base's coefficients were fitted on rates the new fit changes: the profile written
  // carries no saving model (here: a result without cost terms, the older group fit).
  // Every group of the analysis fused (the default plan may hold just one on this host,
  // and the fit needs two measured groups).
  const std::string all =
      (std::filesystem::temp_directory_path() / "fx_saving_model_cli" / "all_groups.json").string();
  std::filesystem::create_directories(std::filesystem::path(all).parent_path());
  auto a = run_fxc({"analyze", kModel, "--opt-level", "2", "--plan-out", all});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json plan = json::parse(std::ifstream(all));
  for (auto& g : plan["groups"]) g["status"] = "accepted";
  std::ofstream(all) << plan.dump();
  auto p = run_fxc({"profile", kModel, "--plan", all, "--runs", "3", "--warmup", "1", "--threads",
                    "2", "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json doc = json::parse(p.out);
  for (const char* side : {"before", "after"})
    for (auto& k : doc[side]["kernels"]) k.erase("cost");
  for (auto& g : doc["groups"]) g.erase("cost_terms");
  const std::string base = write("base.json", profile_with_saving_model());
  const std::string out =
      (std::filesystem::temp_directory_path() / "fx_saving_model_cli" / "refit.json").string();
  auto c = run_fxc({"calibrate", "--from", write("old.json", doc), "--device", base, "--out", out});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::ifstream in(out);
  EXPECT_FALSE(json::parse(in).contains("saving_model"));
}

}  // namespace
}  // namespace fx
