// SPDX-License-Identifier: Apache-2.0
#pragma once
// Node tests the runtime cannot pass although all their ops are supported, by
// name, with the reason. Every other test whose ops are supported must pass.

#include <map>
#include <string>

namespace fxconf {

const std::map<std::string, std::string>& known_skips();

}  // namespace fxconf
