// SPDX-License-Identifier: Apache-2.0
#include "cuda_runtime/cudnn_ops.h"

#include <cudnn.h>

#include <algorithm>

#include "cuda_runtime/cuda_error.h"
#include "util/error.h"

namespace fx::cuda {

namespace {

int dim(int64_t v) {
  return static_cast<int>(v);
}

cudnnTensorDescriptor_t tensor4d(int64_t n, int64_t c, int64_t h, int64_t w) {
  cudnnTensorDescriptor_t d;
  check_cudnn(cudnnCreateTensorDescriptor(&d), "tensor descriptor");
  check_cudnn(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, dim(n), dim(c),
                                         dim(h), dim(w)),
              "tensor descriptor [" + std::to_string(n) + "," + std::to_string(c) + "," +
                  std::to_string(h) + "," + std::to_string(w) + "]");
  return d;
}

}  // namespace

struct CudnnConv::Impl {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  std::size_t ws = 0;
  bool fused = false;  // with a Relu: the bias/activation form
  bool residual = false;
  ~Impl() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (act) cudnnDestroyActivationDescriptor(act);
  }
};

CudnnConv::CudnnConv(void* handle, const ConvParams& p, bool bias, bool residual, bool relu,
                     const void* x, const void* w, void* y, void* search_workspace,
                     std::size_t search_workspace_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.h = static_cast<cudnnHandle_t>(handle);
  m.x = tensor4d(p.n, p.c, p.h, p.w);
  m.y = tensor4d(p.n, p.k, p.out_h, p.out_w);
  check_cudnn(cudnnCreateFilterDescriptor(&m.w), "filter descriptor");
  check_cudnn(cudnnSetFilter4dDescriptor(m.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, dim(p.k),
                                         dim(p.c / p.groups), dim(p.r), dim(p.s)),
              "filter descriptor");
  check_cudnn(cudnnCreateConvolutionDescriptor(&m.conv), "convolution descriptor");
  check_cudnn(
      cudnnSetConvolution2dDescriptor(m.conv, dim(p.pad[0]), dim(p.pad[1]), dim(p.stride[0]),
                                      dim(p.stride[1]), dim(p.dilation[0]), dim(p.dilation[1]),
                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "convolution descriptor");
  check_cudnn(cudnnSetConvolutionGroupCount(m.conv, dim(p.groups)), "group count");
  check_cudnn(cudnnSetConvolutionMathType(m.conv, CUDNN_FMA_MATH), "math type (FMA, no TF32)");
  m.fused = relu;
  m.residual = residual;
  if (bias || relu) m.bias = tensor4d(1, p.k, 1, 1);
  if (m.fused) {
    check_cudnn(cudnnCreateActivationDescriptor(&m.act), "activation descriptor");
    check_cudnn(
        cudnnSetActivationDescriptor(m.act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
        "activation descriptor");
  }
  {
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int found = 0;
    check_cudnn(
        cudnnFindConvolutionForwardAlgorithmEx(m.h, m.x, x, m.w, w, m.conv, m.y, y, 8, &found, perf,
                                               search_workspace, search_workspace_bytes),
        "algorithm search");
    bool any = false;
    for (int i = 0; i < found && !any; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType == CUDNN_FMA_MATH) {
        m.algo = perf[i].algo;
        any = true;
      }
    if (!any)
      throw Error("cuDNN: no float32 (FMA) algorithm for a " + std::to_string(p.r) + "x" +
                  std::to_string(p.s) + " convolution of [" + std::to_string(p.n) + "," +
                  std::to_string(p.c) + "," + std::to_string(p.h) + "," + std::to_string(p.w) +
                  "] within the search workspace");
  }
  check_cudnn(cudnnGetConvolutionForwardWorkspaceSize(m.h, m.x, m.w, m.conv, m.y, m.algo, &m.ws),
              "workspace size");
}

CudnnConv::~CudnnConv() = default;

std::size_t CudnnConv::workspace_bytes() const {
  return impl_->ws;
}

void CudnnConv::run(const void* x, const void* w, const void* bias, const void* residual, void* y,
                    void* workspace) const {
  const Impl& m = *impl_;
  const float one = 1.f, zero = 0.f;
  if (!m.fused) {
    // Without an activation cuDNN's fused call takes one algorithm only: the best
    // algorithm, then the additions in place.
    check_cudnn(cudnnConvolutionForward(m.h, &one, m.x, x, m.w, w, m.conv, m.algo, workspace, m.ws,
                                        &zero, m.y, y),
                "convolution");
    if (residual)
      check_cudnn(cudnnAddTensor(m.h, &one, m.y, residual, &one, m.y, y), "residual add");
    if (bias) check_cudnn(cudnnAddTensor(m.h, &one, m.bias, bias, &one, m.y, y), "bias add");
    return;
  }
  if (!bias) throw Error("cuDNN: the fused convolution needs a bias buffer (zeros when none)");
  const float alpha2 = residual ? 1.f : 0.f;
  check_cudnn(cudnnConvolutionBiasActivationForward(
                  m.h, &one, m.x, x, m.w, w, m.conv, m.algo, workspace, m.ws, &alpha2, m.y,
                  residual ? residual : y, m.bias, bias, m.act, m.y, y),
              "convolution with bias and activation");
}

struct CudnnBatchNorm::Impl {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x = nullptr, bn = nullptr;
  double epsilon = 1e-5;
  ~Impl() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (bn) cudnnDestroyTensorDescriptor(bn);
  }
};

CudnnBatchNorm::CudnnBatchNorm(void* handle, const BatchNormParams& p)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.h = static_cast<cudnnHandle_t>(handle);
  m.x = tensor4d(p.n, p.c, p.h, p.w);
  m.bn = tensor4d(1, p.c, 1, 1);
  m.epsilon = std::max(p.epsilon, CUDNN_BN_MIN_EPSILON);
}

CudnnBatchNorm::~CudnnBatchNorm() = default;

void CudnnBatchNorm::run(const void* x, const void* scale, const void* bias, const void* mean,
                         const void* var, void* y) const {
  const float one = 1.f, zero = 0.f;
  check_cudnn(cudnnBatchNormalizationForwardInference(impl_->h, CUDNN_BATCHNORM_SPATIAL, &one,
                                                      &zero, impl_->x, x, impl_->x, y, impl_->bn,
                                                      scale, bias, mean, var, impl_->epsilon),
              "batch normalization");
}

struct CudnnPool::Impl {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
  ~Impl() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (pool) cudnnDestroyPoolingDescriptor(pool);
  }
};

CudnnPool::CudnnPool(void* handle, const PoolParams& p) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.h = static_cast<cudnnHandle_t>(handle);
  m.x = tensor4d(p.n, p.c, p.h, p.w);
  m.y = tensor4d(p.n, p.c, p.out_h, p.out_w);
  check_cudnn(cudnnCreatePoolingDescriptor(&m.pool), "pooling descriptor");
  const cudnnPoolingMode_t mode = p.mode == PoolParams::Max ? CUDNN_POOLING_MAX
                                  : p.mode == PoolParams::AverageCountPad
                                      ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                      : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  check_cudnn(cudnnSetPooling2dDescriptor(m.pool, mode, CUDNN_NOT_PROPAGATE_NAN, dim(p.window[0]),
                                          dim(p.window[1]), dim(p.pad[0]), dim(p.pad[1]),
                                          dim(p.stride[0]), dim(p.stride[1])),
              "pooling descriptor");
}

CudnnPool::~CudnnPool() = default;

void CudnnPool::run(const void* x, void* y) const {
  const float one = 1.f, zero = 0.f;
  check_cudnn(cudnnPoolingForward(impl_->h, impl_->pool, &one, impl_->x, x, &zero, impl_->y, y),
              "pooling");
}

}  // namespace fx::cuda
