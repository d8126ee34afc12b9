// SPDX-License-Identifier: Apache-2.0
// profile_in_child against stand-in programs that behave like a broken fxc: the
// parent must turn every way the child can fail into an fx::Error, never crash.

#include "profile/child_profiler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace fx {
namespace {

std::string script(const std::string& name, const std::string& body) {
  auto dir = std::filesystem::temp_directory_path() / "fx_profile_tests";
  std::filesystem::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

std::string error_of(const ChildProfileRequest& q) {
  try {
    profile_in_child(q);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << q.fxc_path << " was accepted";
  return {};
}

ChildProfileRequest request(const std::string& program) {
  ChildProfileRequest q;
  q.fxc_path = program;
  q.model = "m.onnx";
  q.timeout_s = 10;
  return q;
}

TEST(ChildProfiler, CommandLineCarriesTheOptions) {
  ChildProfileRequest q = request("/opt/fxc");
  q.options.runs = 7;
  q.options.threads = 3;
  q.dims = {{"batch", 2}};
  auto argv = child_profile_command(q);
  std::string line;
  for (const auto& a : argv) line += a + " ";
  EXPECT_EQ(argv[0], "/opt/fxc");
  EXPECT_NE(line.find("profile m.onnx --json --in-process"), std::string::npos) << line;
  EXPECT_NE(line.find("--runs 7"), std::string::npos) << line;
  EXPECT_NE(line.find("--threads 3"), std::string::npos) << line;
  EXPECT_NE(line.find("--dim batch=2"), std::string::npos) << line;
  EXPECT_NE(line.find("--parent-pid " + std::to_string(::getpid())), std::string::npos) << line;
}

TEST(ChildProfiler, ACrashingChildIsAnError) {
  std::string m = error_of(request(script("crash.sh", "echo 'running conv' >&2; kill -SEGV $$")));
  EXPECT_NE(m.find("m.onnx"), std::string::npos) << m;
  EXPECT_NE(m.find("crashed with SIGSEGV (segmentation fault)"), std::string::npos) << m;
  EXPECT_NE(m.find("running conv"), std::string::npos) << m;
}

TEST(ChildProfiler, AHangingChildTimesOut) {
  ChildProfileRequest q = request(script("hang.sh", "sleep 30"));
  q.timeout_s = 0.3;
  std::string m = error_of(q);
  EXPECT_NE(m.find("timed out"), std::string::npos) << m;
  EXPECT_NE(m.find("--timeout"), std::string::npos) << m;
}

TEST(ChildProfiler, TheChildsOwnErrorMessageComesBack) {
  std::string m =
      error_of(request(script("fail.sh", "echo 'fxc: m.onnx: not an ONNX model' >&2; exit 2")));
  EXPECT_EQ(m, "m.onnx: not an ONNX model");
}

TEST(ChildProfiler, OutputThatIsNotAProfileIsAnError) {
  EXPECT_NE(error_of(request(script("garbage.sh", "echo hello"))).find("no valid JSON"),
            std::string::npos);
  EXPECT_NE(error_of(request(script("partial.sh", "echo '{\"device\": \"cpu\"}'"))).find("missing"),
            std::string::npos);
}

}  // namespace
}  // namespace fx
