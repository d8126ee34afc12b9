// SPDX-License-Identifier: Apache-2.0
#include "conformance_skips.h"

namespace fxconf {

const std::map<std::string, std::string>& known_skips() {
  static const std::map<std::string, std::string> skips = {
      {"test_batchnorm_epsilon_training_mode",
       "training-mode BatchNormalization (batch statistics) is not an inference op"},
      {"test_batchnorm_example_training_mode",
       "training-mode BatchNormalization (batch statistics) is not an inference op"},
      {"test_maxpool_with_argmax_2d_precomputed_pads",
       "MaxPool's Indices output is not implemented"},
      {"test_maxpool_with_argmax_2d_precomputed_strides",
       "MaxPool's Indices output and storage_order are not implemented"},
      {"test_resize_downsample_scales_cubic",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_downsample_scales_cubic_align_corners",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_downsample_sizes_cubic",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_upsample_scales_cubic",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_upsample_scales_cubic_align_corners",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_upsample_scales_cubic_asymmetric",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
      {"test_resize_upsample_sizes_cubic",
       "Resize mode 'cubic' is not implemented (nearest and linear are)"},
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

}  // namespace fxconf
