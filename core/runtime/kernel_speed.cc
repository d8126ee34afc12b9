// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernel_speed.h"

#include "runtime/kernel_registry.h"
#include "util/error.h"

namespace fx {
namespace {

// Ops whose kernel is not of its family's speed class, and why.
struct SpeedException {
  const char* op;
  KernelSpeed speed;
  const char* note;
};
constexpr SpeedException kSpeedExceptions[] = {
    {"Einsum", KernelSpeed::Optimized,
     "two float32 inputs of matmul form (batch, row, column and contracted letters) run as "
     "packed oneDNN sgemm; other forms sum every index combination (reference)"},
    {"GridSample", KernelSpeed::Optimized,
     "nearest and bilinear with zeros or border padding: float taps computed once per output "
     "pixel for every channel, pixels over threads; bicubic and reflection padding run the "
     "double-precision reference loop"},
};

}  // namespace

const char* kernel_speed_name(KernelSpeed s) {
  return s == KernelSpeed::Reference ? "reference" : "optimized";
}

std::vector<OpSpeed> op_speeds() {
  std::vector<OpSpeed> out;
  for (const KernelFamily& f : kernel_families())
    for (const std::string& op : f.ops) {
      OpSpeed s{
          op, f.name, f.reference_speed ? KernelSpeed::Reference : KernelSpeed::Optimized, {}};
      for (const SpeedException& e : kSpeedExceptions)
        if (op == e.op) s.speed = e.speed, s.note = e.note;
      out.push_back(std::move(s));
    }
  return out;
}

OpSpeed kernel_speed(const std::string& op) {
  for (OpSpeed& s : op_speeds())
    if (s.op == op) return s;
  throw Error("no kernel is registered for op " + op);
}

}  // namespace fx
