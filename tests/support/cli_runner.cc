// SPDX-License-Identifier: Apache-2.0
#include "support/cli_runner.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fx::testing {
namespace {
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

CliResult run_fxc(const std::vector<std::string>& args) {
  std::random_device rd;
  auto err_path = std::filesystem::temp_directory_path() / ("fxc-err-" + std::to_string(rd()));
  std::string cmd = quote(FX_FXC_PATH);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " 2>" + quote(err_path.string());
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = slurp(err_path);
  std::filesystem::remove(err_path);
  return r;
}

}  // namespace fx::testing
