// SPDX-License-Identifier: Apache-2.0
#pragma once
// Logging setup shared by the CLI and the GUI. Libraries log through spdlog's
// default logger; only the executables decide the level and the sink.

namespace fx {

enum class LogLevel { Quiet, Normal, Verbose };

// Installs a stderr logger at the given level (Quiet: errors only; Normal: warnings;
// Verbose: debug).
void setup_logging(LogLevel level);

}  // namespace fx
