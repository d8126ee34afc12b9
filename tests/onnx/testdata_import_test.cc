// SPDX-License-Identifier: Apache-2.0
// Imports every model.onnx shipped by Debian's libonnx-testdata: each must import
// or be refused with a FileError; nothing else (no crash, no other exception).

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "onnx/model_loader.h"
#include "util/error.h"

namespace fx {
namespace {

constexpr const char* kTestData = "/usr/share/libonnx-testdata/data";

TEST(TestDataImport, EveryShippedModelImportsOrIsRefusedClearly) {
  namespace fs = std::filesystem;
  ASSERT_TRUE(fs::exists(kTestData)) << "install libonnx-testdata (packaging/install-deps.sh)";
  int imported = 0, refused = 0;
  std::map<std::string, std::string> refusals;
  for (const auto& entry : fs::recursive_directory_iterator(kTestData)) {
    if (entry.path().filename() != "model.onnx") continue;
    try {
      auto m = load_onnx(entry.path().string());
      EXPECT_GT(m.graph.node_count() + m.graph.outputs().size(), 0u) << entry.path();
      ++imported;
    } catch (const FileError& e) {
      ++refused;
      refusals[entry.path().string()] = e.what();
    }
  }
  std::printf("libonnx-testdata: %d imported cleanly, %d refused with a clear error\n", imported,
              refused);
  for (const auto& [path, why] : refusals) std::printf("  refused: %s\n", why.c_str());
  EXPECT_GT(imported, 1000);
  // Refusals must be rare and explained; every file in the set is a valid model.
  EXPECT_LT(refused, 10);
}

}  // namespace
}  // namespace fx
