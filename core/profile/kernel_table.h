// SPDX-License-Identifier: Apache-2.0
#pragma once
// The per-kernel table as text, shared by `fxc profile` and `fxc trace-import`:
//
//   kernel                      ops                  calls    time   share      bytes   GB/s
//   /layer1/0/conv1/Conv        Conv                     1  412 us   23.1%    1.2 MiB   3.05
//
// Rows come sorted (aggregate_kernels); `top` limits them (0: all) and a last line
// says how many were left out and their share.

#include <cstddef>
#include <string>
#include <vector>

#include "profile/timeline.h"

namespace fx {

std::string format_kernel_table(const std::vector<KernelStats>& kernels, std::size_t top = 0);

// Time by op type (a fused kernel counts under its joined ops, "Conv+Relu"):
//   Conv                 12 kernels   3.10 ms   61.2%
std::string format_op_summary(const std::vector<KernelStats>& kernels);

// "1.2 MiB", "512 B".
std::string format_bytes(int64_t bytes);
// "412 us", "3.18 ms", "1.02 s".
std::string format_duration_us(double us);

}  // namespace fx
