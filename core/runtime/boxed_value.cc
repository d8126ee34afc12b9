// SPDX-License-Identifier: Apache-2.0
#include "runtime/boxed_value.h"

#include "runtime/kernel.h"
#include "util/error.h"

namespace fx {

BoxedPtr KernelContext::input_boxed(int) const {
  return nullptr;
}

void KernelContext::set_output_boxed(int i, BoxedPtr) {
  throw Error("step '" + step_name() + "': output " + std::to_string(i) +
              " cannot hold a sequence or optional here");
}

}  // namespace fx
