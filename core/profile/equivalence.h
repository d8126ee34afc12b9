// SPDX-License-Identifier: Apache-2.0
#pragma once
// Do two programs compute the same thing? Output comparison with ONNX's test
// tolerances, and the check of one fused step against the unfused run:
//
//   CapturedRun ref = capture_values(unfused_executor, inputs, wanted);  // unfused run
//   TensorDiff d = check_step(graph, fused_step, ref.values, threads);               // fused alone
//   if (!d.match) ...   // d.where names the output, d.max_abs_error says by how much
//
// The fused step runs on exactly the tensors the unfused run fed its members, so an
// error cannot come from (or hide behind) another group.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"

namespace fx {

// allclose: |actual - expected| <= atol' + rtol * |expected|, element by element.
// Scaled (the default): atol' = atol * max(1, max |expected| of that tensor). A fused
// kernel sums in another order than the unfused one, and that error grows with the
// magnitude of the values summed: near-zero logits beside logits of 500 move by 1e-4
// while every value is right to 1e-6 of the tensor's scale. Absolute: atol' = atol,
// ONNX's node-test form, for tensors whose scale is about 1.
//
// Quantized values are judged in quantization steps instead: two values within one step
// (plus the float tolerance, for the float rounding of a dequantized value) are equal. An int8
// kernel and the float dequantize-compute-quantize path it replaces round a value near a half
// apart, and ONNX Runtime's own QDQ fusions differ from its reference by such steps. A step is 1
// for 8-bit integer tensors and the scale of the DequantizeLinear that wrote a float tensor
// (quantization_step below).
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
  bool scaled = true;
  double steps = 1;  // quantized values may differ by this many steps
  const char* mode() const { return scaled ? "scaled" : "absolute"; }
};

struct TensorDiff {
  bool match = true;
  double max_abs_error = 0;
  // max |a - e| / |e| over elements with |e| > atol (relative error of near-zero
  // values says nothing).
  double max_rel_error = 0;
  int64_t mismatches = 0;  // elements outside the tolerance
  // Largest finite |expected|: the scale max_abs_error reads against.
  double max_abs_expected = 0;
  std::string where;  // the first value that did not match, and why

  // Folds another comparison in (worst of both).
  void merge(const TensorDiff& other);
};

// The quantization step of value `v`: 1 for an 8-bit integer tensor, the scale of the
// DequantizeLinear that wrote a float tensor when that scale is one constant; 0 for
// values that are not quantized (or whose step varies per channel or is computed).
double quantization_step(const Graph& graph, ValueId v);
std::vector<double> quantization_steps(const Graph& graph, const std::vector<ValueId>& values);

// Compares two tensors; differing dtype or dims is a mismatch (with `where` saying so).
// `step` > 0: the values are quantized in steps of `step` (see Tolerance); 0: 8-bit
// integer tensors count in steps of 1, others are compared as floats.
TensorDiff compare_tensors(const Tensor& expected, const Tensor& actual, const std::string& name,
                           const Tolerance& tol = {}, double step = 0);
// Compares two output lists position by position; `names` label them in `where`, `steps`
// (when given) are their quantization steps.
TensorDiff compare_outputs(const std::vector<Tensor>& expected, const std::vector<Tensor>& actual,
                           const std::vector<std::string>& names, const Tolerance& tol = {},
                           const std::vector<double>& steps = {});

// Deep copies of values seen during one run, by value id.
using ValueStore = std::map<ValueId, Tensor>;

struct CapturedRun {
  ValueStore values;
  std::vector<Tensor> outputs;  // graph outputs
};

// Runs the executor once on `inputs` and keeps a copy of every value in `wanted` that a
// step reads or writes (graph inputs and constants included). The observer the
// executor had is replaced for this run and cleared afterwards.
CapturedRun capture_values(Executor& executor, const std::map<std::string, Tensor>& inputs,
                           const std::set<ValueId>& wanted);

// Runs one step's kernel alone on the stored values of its inputs and compares what it
// writes with the stored values of its outputs (quantized outputs in their steps). Throws fx::Error
// when an input or output is missing from the store, or when the kernel throws.
TensorDiff check_step(const Graph& graph, const Step& step, const ValueStore& reference,
                      int threads, const Tolerance& tol = {});

}  // namespace fx
