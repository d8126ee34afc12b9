// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tests the runtime cannot pass although all their ops have kernels, by name, with
// the reason. Every other test whose ops have kernels must pass.

#include <map>
#include <string>

namespace fxconf {

const std::map<std::string, std::string>& known_skips();
// Tests of training-only ops (losses, optimizers, gradients, training-mode
// Dropout/BatchNormalization): not counted in the pass percentage.
bool is_training_test(const std::string& name);

}  // namespace fxconf
