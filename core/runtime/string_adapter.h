// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the data-movement kernels (Concat, Gather, Slice, Transpose, Where, ...) on
// string tensors without a string version of each: every string input becomes an
// int64 tensor of element numbers into one pool, the numeric kernel moves the
// numbers, and each int64 output is read back through the pool as strings. Only ops
// whose outputs are copies of input elements qualify: an op that compares or computes
// on values (Unique, Equal, Max) would see numbers, not strings.

#include <memory>
#include <string>

#include "runtime/kernel.h"

namespace fx {

// True for the ops the adapter serves.
bool moves_strings(const std::string& op_type);

// `inner` run on strings as described above; inputs of other types pass untouched.
std::shared_ptr<Kernel> wrap_string_adapter(std::shared_ptr<Kernel> inner);

}  // namespace fx
