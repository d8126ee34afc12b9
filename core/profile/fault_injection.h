// SPDX-License-Identifier: Apache-2.0
#pragma once
// A test-only hook that breaks one fused kernel on purpose, so that the before/after
// profile's equivalence check and crash handling can be tested on real models:
//
//   FXC_TEST_BREAK_GROUP=fg-1a2b3c4d:wrong   the group's kernel adds 1 to what it writes
//   FXC_TEST_BREAK_GROUP=#0:crash            the first group's kernel raises SIGSEGV
//   FXC_TEST_BREAK_GROUP=#0:slow             the first group's kernel runs right, then
//                                            waits 5 ms (measured slower than its members)
//
// `fxc profile` reads the variable and passes it to run_before_after(), `fxc codegen
// --bench` to run_codegen_bench() (a slow group must fall back at warm-up); nothing
// else does. A selector is a group id or #N (the plan's N-th accepted group, 0-based).

#include <memory>
#include <string>
#include <vector>

#include "codegen/fused_program.h"
#include "runtime/executor.h"

namespace fx {

struct FaultSpec {
  std::string selector;  // group id or "#N"
  enum class Mode { Wrong, Crash, Slow } mode = Mode::Wrong;
};

// Parses "SELECTOR:wrong|crash|slow"; throws fx::Error for anything else.
FaultSpec parse_fault_spec(const std::string& text);

// `kernel`, broken: it crashes before running, or runs and then adds 1 to every float
// it wrote, or runs and then waits.
std::shared_ptr<Kernel> broken_kernel(std::shared_ptr<Kernel> kernel, FaultSpec::Mode mode);

// Breaks the kernel of the group `fault.selector` names in `p` (its step and the
// program's); warns when the plan has no such group.
void inject_fault(FusedProgram& p, const FaultSpec& fault);

}  // namespace fx
