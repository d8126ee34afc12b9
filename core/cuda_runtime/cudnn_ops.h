// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuDNN launches, set up once per plan (descriptors, the algorithm found by
// cudnnFindConvolutionForwardAlgorithm, the workspace size) and run many times. Float32
// with FMA math only (no TF32), so that outputs compare with the CPU runtime and timings
// with PyTorch run the same way. A Conv with a Relu runs through
// cudnnConvolutionBiasActivationForward: relu(conv(x) + residual + bias); without one,
// the convolution then cudnnAddTensor for the residual and the bias (the fused call
// allows a single algorithm without an activation).

#include <cstddef>
#include <memory>

#include "cuda_plan/kernel_params.h"

namespace fx::cuda {

class CudnnConv {
 public:
  // `x`, `w`, `y` are device buffers for the algorithm search (its trial runs overwrite
  // y); algorithms needing more than `search_workspace_bytes` are not considered.
  CudnnConv(void* handle, const ConvParams& p, bool bias, bool residual, bool relu, const void* x,
            const void* w, void* y, void* search_workspace, std::size_t search_workspace_bytes);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  std::size_t workspace_bytes() const;
  // bias: K floats or null; residual: y-shaped or null.
  void run(const void* x, const void* w, const void* bias, const void* residual, void* y,
           void* workspace) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// y = scale * (x - mean) / sqrt(var + epsilon) + bias per channel (inference).
class CudnnBatchNorm {
 public:
  CudnnBatchNorm(void* handle, const BatchNormParams& p);
  ~CudnnBatchNorm();
  CudnnBatchNorm(const CudnnBatchNorm&) = delete;
  CudnnBatchNorm& operator=(const CudnnBatchNorm&) = delete;
  void run(const void* x, const void* scale, const void* bias, const void* mean, const void* var,
           void* y) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CudnnPool {
 public:
  CudnnPool(void* handle, const PoolParams& p);
  ~CudnnPool();
  CudnnPool(const CudnnPool&) = delete;
  CudnnPool& operator=(const CudnnPool&) = delete;
  void run(const void* x, void* y) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx::cuda
