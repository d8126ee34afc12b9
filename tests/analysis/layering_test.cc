// SPDX-License-Identifier: Apache-2.0
// Analysis is arithmetic over the IR and a device profile: no source under core/analysis
// includes a layer that runs, measures or generates code (runtime, profile, codegen,
// calibration, ...). core/CMakeLists.txt checks the same of what fx_analysis links.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace fx {
namespace {

namespace fs = std::filesystem;

TEST(Layering, AnalysisIncludesOnlyIrDeviceAndUtil) {
  const fs::path dir = fs::path(FX_TEST_DATA_DIR) / ".." / ".." / "core" / "analysis";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  const std::set<std::string> allowed = {"analysis", "ir", "device", "util"};
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cc") continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.rfind("#include \"", 0) != 0) continue;
      const std::string path = line.substr(10, line.find('"', 10) - 10);
      const auto slash = path.find('/');
      const std::string layer = slash == std::string::npos ? "" : path.substr(0, slash);
      EXPECT_TRUE(allowed.count(layer))
          << e.path().filename().string() << ":" << n << " includes " << path;
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace
}  // namespace fx
