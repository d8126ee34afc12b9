// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernels whose output 0 may be written over an input other than input 0 (see
// Kernel::may_write_over_input for input 0): a fused Conv whose residual is
// accumulated into its output by oneDNN's sum post-op reads each residual element
// before it writes the same output element, so the memory plan may give the output
// the residual's slot when the residual dies there, and no copy is needed.
// A separate interface (found by dynamic_cast) so that kernel.h, which nearly every
// file includes, stays as it is.

#include "runtime/kernel.h"

namespace fx {

class OverwritesInput {
 public:
  virtual ~OverwritesInput() = default;
  // The input output 0 may be written over, -1 for none. Same guarantee as
  // Kernel::may_write_over_input: same dtype and dims, each element read before the
  // same element of output 0 is written.
  virtual int overwritable_input() const = 0;
};

// The input that `k`'s output 0 may be written over: input 0 for may_write_over_input()
// kernels, the one an OverwritesInput kernel names, else -1.
inline int overwritable_input(const Kernel& k) {
  if (k.may_write_over_input()) return 0;
  const auto* o = dynamic_cast<const OverwritesInput*>(&k);
  return o ? o->overwritable_input() : -1;
}

}  // namespace fx
