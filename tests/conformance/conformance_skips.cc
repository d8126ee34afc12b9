// SPDX-License-Identifier: Apache-2.0
#include "conformance_skips.h"

namespace fxconf {

const std::map<std::string, std::string>& known_skips() {
  static const std::map<std::string, std::string> skips = {
      {"test_bernoulli",
       "random output (ONNX's values come from numpy's generator)"},
      {"test_bernoulli_double",
       "random output (ONNX's values come from numpy's generator)"},
      {"test_bernoulli_double_expanded",
       "random output (ONNX's values come from numpy's generator)"},
      {"test_bernoulli_expanded",
       "random output (ONNX's values come from numpy's generator)"},
      {"test_bernoulli_seed",
       "random output (ONNX's values come from numpy's generator)"},
      {"test_bernoulli_seed_expanded",
       "random output (ONNX's values come from numpy's generator)"},
      {"test_batchnorm_epsilon_training_mode",
       "training-mode BatchNormalization (batch statistics) is not an inference op"},
      {"test_batchnorm_example_training_mode",
       "training-mode BatchNormalization (batch statistics) is not an inference op"},
      {"test_training_dropout",
       "Dropout in training mode draws random masks"},
      {"test_training_dropout_default",
       "Dropout in training mode draws random masks"},
      {"test_training_dropout_default_mask",
       "Dropout in training mode draws random masks"},
      {"test_training_dropout_mask",
       "Dropout in training mode draws random masks"},
  };
  return skips;
}

bool is_training_test(const std::string& name) {
  static const char* const kPrefixes[] = {
      "test_nllloss",  "test_sce_",      "test_adagrad", "test_adam", "test_momentum",
      "test_nesterov_momentum", "test_gradient", "test_training_"};
  for (const char* p : kPrefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return name.find("training_mode") != std::string::npos;
}

}  // namespace fxconf
