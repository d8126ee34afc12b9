// SPDX-License-Identifier: Apache-2.0
#include "cuda_runtime/cuda_error.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "util/error.h"

namespace fx::cuda {

void check_cuda(int status, const std::string& what) {
  if (status == cudaSuccess) return;
  throw Error("CUDA: " + what + ": " + cudaGetErrorString(static_cast<cudaError_t>(status)));
}

void check_cudnn(int status, const std::string& what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw Error("cuDNN: " + what + ": " + cudnnGetErrorString(static_cast<cudnnStatus_t>(status)));
}

void check_cublas(int status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error("cuBLASLt: " + what + ": status " + std::to_string(status));
}

}  // namespace fx::cuda
