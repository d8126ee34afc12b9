// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA, cuDNN and cuBLASLt status codes as fx::Error, with the library's own words and
// what was being done: the executor's boundary with the libraries.

#include <string>

namespace fx::cuda {

void check_cuda(int status, const std::string& what);    // cudaError_t
void check_cudnn(int status, const std::string& what);   // cudnnStatus_t
void check_cublas(int status, const std::string& what);  // cublasStatus_t

}  // namespace fx::cuda
