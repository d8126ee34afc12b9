// SPDX-License-Identifier: Apache-2.0
#include "util/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace fx {

void setup_logging(LogLevel level) {
  auto logger = spdlog::stderr_color_mt("fx");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
  switch (level) {
    case LogLevel::Quiet: spdlog::set_level(spdlog::level::err); break;
    case LogLevel::Normal: spdlog::set_level(spdlog::level::warn); break;
    case LogLevel::Verbose: spdlog::set_level(spdlog::level::debug); break;
  }
}

}  // namespace fx
