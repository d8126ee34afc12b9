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
  Depthwise = 3,     // depthwise convolution (one filter per channel)
  MatMul = 4,        // MatMul, Gemm, Einsum
  DataMovement = 5,  // copies and layout: Transpose, Concat, Slice, Gather, Pad, Reshape
  // Windowed pooling (MaxPool, AveragePool, LpPool). A class of its own: the runtime's
  // pooling loops and its depthwise convolutions differ in speed and in what a fused
  // program saves on them. Profiles and results written before it filed pooling under
  // depthwise (device_profile.h and before_after_document.h read them back).
  Pooling = 6,
};
inline constexpr int kKernelClassCount = 7;
// "elementwise", "reduction", "conv", "depthwise", "matmul", "data_movement", "pooling".
const char* kernel_class_name(KernelClass c);
// Inverse of kernel_class_name; nullopt for an unknown name.
std::optional<KernelClass> kernel_class_from_name(std::string_view name);

}  // namespace fx
