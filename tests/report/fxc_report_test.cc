// End to end: fxc analyze --plan-out on tiny_cnn.onnx, a hand-written before/after result
// for that plan (docs/before_after.md), then fxc report in the three formats.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/fusion_plan.h"
#include "onnx/model_loader.h"
#include "report/before_after_fixture.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

int run_fxc(const std::string& args, std::string* out = nullptr) {
  std::string cmd = std::string(FX_FXC_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  std::string text;
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  int status = pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

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
  std::string out;
  ASSERT_EQ(
      run_fxc("analyze " + model + " --device nvidia-h100 --plan-out " + plan + " --accept-all",
              &out),
      0)
      << out;
  FusionPlan p = FusionPlan::load(plan);
  ASSERT_FALSE(p.accepted().empty());
  std::vector<FusionGroup> groups;
  for (const auto* g : p.accepted()) groups.push_back(*g);
  std::vector<std::string> names;
  LoadedModel loaded = load_onnx(model);  // kept alive: the loop reads its graph
  for (const auto& n : loaded.graph.nodes()) names.push_back(n.name);
  std::string ba = (dir / "before_after.json").string();
  std::ofstream(ba) << testing::before_after_fixture(names, groups).dump();

  for (const char* ext : {"html", "md", "json"}) {
    fs::path r = dir / (std::string("report.") + ext);
    ASSERT_EQ(
        run_fxc("report " + model + " --plan " + plan + " --profile " + ba + " --out " + r.string(),
                &out),
        0)
        << out;
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
  EXPECT_EQ(
      run_fxc("report " + model + " --plan " + plan + " --out " + (dir / "r.pdf").string(), &out),
      2);
  EXPECT_NE(out.find("report format"), std::string::npos) << out;
  std::ofstream(dir / "bad.json") << "[1, 2]";
  EXPECT_EQ(run_fxc("report " + model + " --plan " + plan + " --profile " +
                        (dir / "bad.json").string() + " --out " + (dir / "r.html").string(),
                    &out),
            2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fx
