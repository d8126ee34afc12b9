// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which build this is: 16 hex digits hashing the sources the programs are built from,
// the oneDNN headers and the compiler and flags (cmake/fx_build_id.cmake, rerun at every
// build). Same id, same code: measurements keyed by it (the autotune cache) survive only
// while the code that was measured does.

namespace fx {

const char* build_id();

}  // namespace fx
