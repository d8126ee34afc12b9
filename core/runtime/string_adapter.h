// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs numeric kernels on string tensors where the op only moves, orders or tests
// elements (Concat, Gather, Slice, Transpose, Where, Pad, Unique, NonZero, Trilu, ...)
// without a string version of each: the strings of every input are numbered by value
// (the empty string is 0, the others 1, 2, ... in byte order), the numeric kernel runs
// on those int64 numbers, and its data outputs are read back as strings. Numbering by
// value keeps what these ops need of strings: equal strings are equal numbers, order is
// byte order (Unique sorts as ONNX Runtime does) and "zero" is the empty string (Pad's
// default value, Trilu's cleared elements, NonZero's test). Ops that compute on values
// (Add, Max, ...) are not served and refuse strings.

#include <memory>
#include <string>

#include "runtime/kernel.h"

namespace fx {

// True for the ops the adapter serves.
bool moves_strings(const std::string& op_type);

// `inner` (the kernel of an op for which moves_strings is true) run on strings as
// described above; a run without string inputs is the inner kernel's own.
std::shared_ptr<Kernel> wrap_string_adapter(const std::string& op_type,
                                            std::shared_ptr<Kernel> inner);

}  // namespace fx
