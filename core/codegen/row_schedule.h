// SPDX-License-Identifier: Apache-2.0
#pragma once
// The passes over the row that the C++ emitter (cpp_emitter.h) schedules a lowered row
// kernel into: each var's pass, when each per-row scalar is known, and the pass that
// does the most arithmetic (where a later row is prefetched).

#include <vector>

#include "codegen/kernel_ir.h"

namespace fx {

struct Schedule {
  std::vector<int> phase;     // per var: pass computing a row var; -2 unknown
  std::vector<int> ready;     // per var: scalars available after pass `ready` (-1: before)
  std::vector<int> last_use;  // per var: last pass reading it
  int passes = 1;
};

bool is_reduction(const KOp& op);

// Throws fx::Error when a reduction reads a value that is constant along the row.
Schedule schedule_passes(const LoweredGroup& g);

// The pass doing the most arithmetic on row values (the earliest on a tie).
int heaviest_pass(const LoweredGroup& g, const Schedule& s);

}  // namespace fx
