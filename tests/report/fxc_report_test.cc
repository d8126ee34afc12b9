// SPDX-License-Identifier: Apache-2.0
// End to end: fxc analyze --plan-out on tiny_cnn.onnx, a hand-written before/after result
// for that plan (docs/before_after.md), then fxc report in the three formats.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/fusion_plan.h"
#include "onnx/model_loader.h"
#include "report/before_after_fixture.h"
#include "support/cli_runner.h"

namespace fx {
namespace {

namespace fs = std::filesystem;
using testing::run_fxc;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FxcReport, TinyCnnWithBeforeAfterFixture) {
  fs::path dir = fs::temp_directory_path() / ("fx_report_e2e_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string model = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";
  std::string plan = (dir / "plan.json").string();
  auto a =
      run_fxc({"analyze", model, "--device", "nvidia-h100", "--plan-out", plan, "--accept-all"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  FusionPlan p = FusionPlan::load(plan);
  ASSERT_FALSE(p.accepted().empty());
  std::vector<FusionGroup> groups;
  for (const auto* g : p.accepted()) groups.push_back(*g);
  std::vector<std::string> names;
  // As the commands read it (canonical form: its BNs folded into their Convs); kept
  // alive: the loop reads its graph.
  LoadedModel loaded = load_onnx(model, command_load_options({}, {}, false));
  for (const auto& n : loaded.graph.nodes()) names.push_back(n.name);
  std::string ba = (dir / "before_after.json").string();
  std::ofstream(ba) << testing::before_after_fixture(names, groups).dump();

  for (const char* ext : {"html", "md", "json"}) {
    fs::path r = dir / (std::string("report.") + ext);
    auto rep = run_fxc({"report", model, "--plan", plan, "--profile", ba, "--out", r.string()});
    std::string out = rep.out + rep.err;
    ASSERT_EQ(rep.exit_code, 0) << out;
    EXPECT_NE(out.find("before/after measured"), std::string::npos) << out;
  }
  std::string html = slurp(dir / "report.html");
  EXPECT_NE(html.find("scatter-chart"), std::string::npos);
  EXPECT_NE(html.find("timeline-strip"), std::string::npos);
  EXPECT_NE(html.find("<tr><th>Name</th><td>nvidia-h100</td>"), std::string::npos);  // plan device
  EXPECT_NE(html.find("estimated on test-device"), std::string::npos);  // the result says so
  auto j = nlohmann::json::parse(slurp(dir / "report.json"));
  EXPECT_EQ(j["schema"], "fusion-explorer/report");
  EXPECT_EQ(j["measurements"]["kind"], "before_after");
  EXPECT_EQ(j["model"]["nodes"], int64_t(names.size()));
  EXPECT_NE(slurp(dir / "report.md").find("| group | pattern |"), std::string::npos);

  // Bad inputs fail with a message, not a crash.
  auto pdf = run_fxc({"report", model, "--plan", plan, "--out", (dir / "r.pdf").string()});
  EXPECT_EQ(pdf.exit_code, 2);
  EXPECT_NE((pdf.out + pdf.err).find("report format"), std::string::npos) << pdf.out << pdf.err;
  std::ofstream(dir / "bad.json") << "[1, 2]";
  EXPECT_EQ(run_fxc({"report", model, "--plan", plan, "--profile", (dir / "bad.json").string(),
                     "--out", (dir / "r.html").string()})
                .exit_code,
            2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fx
