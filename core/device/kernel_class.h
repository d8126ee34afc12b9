// SPDX-License-Identifier: Apache-2.0
#pragma once
// The classes of kernels the cost model gives their own effective rates (device_profile.h)
// and the saving model its own coefficients (saving_coefficients.h).

#include <optional>
#include <string_view>

namespace fx {

// How a kernel uses the machine, for its effective rates.
enum class KernelClass {
  Elementwise = 0,   // memory-bound loops: unary/binary/broadcast ops, folded BatchNorm
  Reduction = 1,     // reductions and row kernels: Softmax, LayerNorm, Reduce*, Global*Pool
  Conv = 2,          // dense (grouped) convolution
  Depthwise = 3,     // depthwise convolution and windowed pooling (MaxPool, AveragePool)
  MatMul = 4,        // MatMul, Gemm, Einsum
  DataMovement = 5,  // copies and layout: Transpose, Concat, Slice, Gather, Pad, Reshape
};
inline constexpr int kKernelClassCount = 6;
// "elementwise", "reduction", "conv", "depthwise", "matmul", "data_movement".
const char* kernel_class_name(KernelClass c);
// Inverse of kernel_class_name; nullopt for an unknown name.
std::optional<KernelClass> kernel_class_from_name(std::string_view name);

}  // namespace fx
