// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fxc subcommands. Each register_* adds its subcommand to the app and, when
// that subcommand is chosen, stores in `run` the function that carries it out and
// returns the exit code. fx::Error thrown by it becomes "fxc: <message>", exit 2.

#include <CLI/CLI.hpp>
#include <functional>

namespace fxc {

using Runner = std::function<int()>;

void register_inspect(CLI::App& app, Runner& run);
// run (cmd_run.cc)
void register_run(CLI::App& app, Runner& run);
// analyze, why, calibrate, bench-synthetic (cmd_analyze.cc)
void register_analyze(CLI::App& app, Runner& run);

// profile, trace-import (cmd_profile.cc)
void register_profile(CLI::App& app, Runner& run);
// report (cmd_report.cc)
void register_report(CLI::App& app, Runner& run);
// codegen (cmd_codegen.cc)
void register_codegen(CLI::App& app, Runner& run);
// export (cmd_export.cc)
void register_export(CLI::App& app, Runner& run);
// ops (cmd_ops.cc)
void register_ops(CLI::App& app, Runner& run);

}  // namespace fxc
