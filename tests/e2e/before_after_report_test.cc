// SPDX-License-Identifier: Apache-2.0
// The before/after pipeline end to end on tiny_cnn: a plan from `fxc analyze`, the
// measurement from `fxc profile --plan --json`, then `fxc calibrate --from` and
// `fxc report` reading that very file (not a hand-made fixture).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/cli_runner.h"

namespace fx {
namespace {

using nlohmann::json;
using testing::run_fxc;

const std::string kModel = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(BeforeAfterPipeline, ProfileWithPlanThenCalibrateThenReportShowMeasuredData) {
  auto dir = std::filesystem::temp_directory_path() / "fx_before_after_pipeline";
  std::filesystem::create_directories(dir);
  const std::string plan = (dir / "plan.json").string(), ba = (dir / "ba.json").string(),
                    md = (dir / "report.md").string(), rj = (dir / "report.json").string(),
                    fitted = (dir / "fitted.json").string();
  auto a = run_fxc({"analyze", kModel, "--plan-out", plan, "--accept-all"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto p = run_fxc({"profile", kModel, "--plan", plan, "--runs", "3", "--warmup", "1", "--threads",
                    "2", "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::ofstream(ba) << p.out;
  json d = json::parse(p.out);
  EXPECT_EQ(d["plan"], plan);
  EXPECT_TRUE(d["opt_level"].is_null());
  EXPECT_EQ(d["outputs_match"], true);
  ASSERT_GE(d["groups"].size(), 2u);
  for (const auto& g : d["groups"])  // the model behind each predicted saving
    EXPECT_FALSE(g["predicted_by"].get<std::string>().empty()) << g.dump();

  auto c = run_fxc({"calibrate", "--from", ba, "--out", fitted});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("before calibration (cpu-host)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("after calibration (fitted)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("saving model, leave one group out"), std::string::npos) << c.out;
  EXPECT_TRUE(std::filesystem::exists(fitted));
  // The fitted profile carries the saving model (per class: fitted or why not), and
  // analysis on it says, for each group, which model estimated its saving.
  json fp = json::parse(slurp(fitted));
  ASSERT_TRUE(fp.contains("saving_model")) << fp.dump();
  EXPECT_GE(fp["saving_model"]["groups"].get<int>(), 2);
  EXPECT_NE(fp["saving_model"]["fitted_to"].get<std::string>().find("ba.json"), std::string::npos);
  ASSERT_TRUE(fp["saving_model"]["classes"].contains("conv")) << fp["saving_model"].dump();
  auto af = run_fxc({"analyze", kModel, "--device", fitted, "--json"});
  ASSERT_EQ(af.exit_code, 0) << af.err;
  const bool conv_fitted = fp["saving_model"]["classes"]["conv"]["fitted"].get<bool>();
  // A named document: a range-for over a member of a temporary reads it after it is freed.
  json af_doc = json::parse(af.out);
  for (const auto& g : af_doc["groups"])
    EXPECT_EQ(g["est_time_saved_by"].get<std::string>().rfind(
                  conv_fitted ? "saving model (class conv" : "difference of kernel times", 0),
              0u)
        << g.dump();

  auto r = run_fxc({"report", kModel, "--plan", plan, "--profile", ba, "--out", rj});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json rep = json::parse(slurp(rj));
  const json& m = rep["measurements"];
  EXPECT_EQ(m["kind"], "before_after");
  EXPECT_DOUBLE_EQ(m["speedup"].get<double>(), d["speedup"].get<double>());
  EXPECT_EQ(m["equivalence"]["outputs_match"], true);
  ASSERT_TRUE(m["calibration"].contains("before")) << m["calibration"].dump();
  // Calibration reads the measured groups; an excluded one (no generated code for one of
  // its ops, e.g. the HardSwish + GlobalAveragePool group of tiny_cnn with its BNs
  // folded) runs unfused and has no measured saving.
  int measured = 0;
  for (const auto& g : d["groups"]) measured += !g["measured_saved_us"].is_null();
  ASSERT_GE(measured, 2);
  EXPECT_EQ(m["calibration"]["before"]["groups"].get<int>(), measured);
  EXPECT_TRUE(m["calibration"]["after"].contains("median_abs_rel_error"));
  EXPECT_EQ(m["calibration"]["in_sample"], true);
  EXPECT_GT(m["calibration"]["unfused_kernels"].get<int>(), 0);
  EXPECT_GT(m["calibration"]["fused_kernels"].get<int>(), 0);
  EXPECT_TRUE(m["calibration"]["resolved"].contains("groups"));
  // The saving model fitted to the same groups, in-sample and leave-one-group-out.
  ASSERT_TRUE(m["calibration"].contains("saving_model")) << m["calibration"].dump();
  EXPECT_EQ(m["calibration"]["saving_model"]["in_sample"]["groups"].get<int>(), measured);
  EXPECT_EQ(m["calibration"]["saving_model"]["leave_one_out"]["groups"].get<int>(), measured);

  auto r2 = run_fxc({"report", kModel, "--plan", plan, "--profile", ba, "--out", md});
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  std::string text = slurp(md);
  EXPECT_NE(text.find("Prediction error"), std::string::npos);
  EXPECT_NE(text.find("before calibration (cpu-host;"), std::string::npos) << text;
  // After calibration: the cost model fitted to this result's own kernels, said in-sample.
  EXPECT_NE(text.find("after calibration (cpu-host fitted to this result's"), std::string::npos)
      << text;
  EXPECT_NE(text.find("in-sample"), std::string::npos);
  EXPECT_NE(text.find("saving model fitted to this result's group savings"), std::string::npos)
      << text;
  EXPECT_NE(text.find("each group predicted by a fit to the others"), std::string::npos);
}

}  // namespace
}  // namespace fx
