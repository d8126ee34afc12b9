// SPDX-License-Identifier: Apache-2.0
#include "device/kernel_class.h"

namespace fx {

const char* kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::Elementwise: return "elementwise";
    case KernelClass::Reduction: return "reduction";
    case KernelClass::Conv: return "conv";
    case KernelClass::Depthwise: return "depthwise";
    case KernelClass::MatMul: return "matmul";
    case KernelClass::DataMovement: return "data_movement";
    case KernelClass::Pooling: return "pooling";
  }
  return "elementwise";
}

std::optional<KernelClass> kernel_class_from_name(std::string_view name) {
  for (int i = 0; i < kKernelClassCount; ++i)
    if (name == kernel_class_name(static_cast<KernelClass>(i))) return static_cast<KernelClass>(i);
  return std::nullopt;
}

}  // namespace fx
