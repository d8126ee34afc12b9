// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the built fxc (FX_FXC_PATH) with arguments and captures its output.

#include <string>
#include <vector>

namespace fx::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

CliResult run_fxc(const std::vector<std::string>& args);

}  // namespace fx::testing
