#include "runtime/kernel_registry.h"

namespace fx {
void register_data_kernels(KernelTable&) {}
}  // namespace fx
