// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the kernel files: a kernel from a lambda, axis handling,
// numpy broadcasting of dims, reading constant inputs at build time.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"
#include "util/error.h"

namespace fx {

class FnKernel final : public Kernel {
 public:
  using Fn = std::function<void(KernelContext&)>;
  explicit FnKernel(Fn fn, bool aliases = false, bool over_input = false)
      : fn_(std::move(fn)), aliases_(aliases), over_input_(over_input) {}
  void run(KernelContext& ctx) override { fn_(ctx); }
  bool aliases_input() const override { return aliases_; }
  bool may_write_over_input() const override { return over_input_; }

 private:
  Fn fn_;
  bool aliases_;
  bool over_input_;
};

inline std::shared_ptr<Kernel> fn_kernel(FnKernel::Fn fn, bool aliases = false) {
  return std::make_shared<FnKernel>(std::move(fn), aliases);
}

// A unary elementwise kernel whose output may take its input's memory
// (Kernel::may_write_over_input).
inline std::shared_ptr<Kernel> unary_fn_kernel(FnKernel::Fn fn) {
  return std::make_shared<FnKernel>(std::move(fn), false, true);
}

// axis in [-rank, rank) -> [0, rank); throws fx::Error otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank);
// Numpy broadcasting of several shapes; throws fx::Error when incompatible.
std::vector<int64_t> broadcast_dims(const std::vector<const std::vector<int64_t>*>& shapes);
// Row-major element strides of dims.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims);

// The constant value of node input i (an initializer), if it is one.
std::optional<Tensor> constant_input(const Graph& graph, const Node& node, std::size_t i);
// Integer list from an optional input tensor (axes, pads, ...); empty when absent.
std::vector<int64_t> ints_of(const Tensor* t);

// Calls f(T{}) for the runtime dtype: float, double, int64, int32, int8, uint8 (and
// bool as uint8), int16, uint16, uint32, uint64. `what` names the op for errors.
template <class F>
void dispatch_all(DType t, const char* what, F&& f) {
  switch (t) {
    case DType::Float32: f(float{}); break;
    case DType::Float64: f(double{}); break;
    case DType::Int64: f(int64_t{}); break;
    case DType::Int32: f(int32_t{}); break;
    case DType::Int16: f(int16_t{}); break;
    case DType::Int8: f(int8_t{}); break;
    case DType::UInt8:
    case DType::Bool: f(uint8_t{}); break;
    case DType::UInt16: f(uint16_t{}); break;
    case DType::UInt32: f(uint32_t{}); break;
    case DType::UInt64: f(uint64_t{}); break;
    default: throw Error(std::string(what) + ": unsupported dtype " + std::string(dtype_name(t)));
  }
}
// Same for numeric types where arithmetic makes sense (not bool).
template <class F>
void dispatch_numeric(DType t, const char* what, F&& f) {
  switch (t) {
    case DType::Float32: f(float{}); break;
    case DType::Float64: f(double{}); break;
    case DType::Int64: f(int64_t{}); break;
    case DType::Int32: f(int32_t{}); break;
    case DType::Int16: f(int16_t{}); break;
    case DType::Int8: f(int8_t{}); break;
    case DType::UInt8: f(uint8_t{}); break;
    case DType::UInt16: f(uint16_t{}); break;
    case DType::UInt32: f(uint32_t{}); break;
    case DType::UInt64: f(uint64_t{}); break;
    default: throw Error(std::string(what) + ": unsupported dtype " + std::string(dtype_name(t)));
  }
}

}  // namespace fx
