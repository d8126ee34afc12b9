// SPDX-License-Identifier: Apache-2.0
#pragma once
// The small IR a fusion group is lowered to before C++ is emitted: one "row kernel".
//
// The group's tensors are viewed against a reference shape R = [outer axes | row axes].
// A row is one index of the outer axes; each value is either a row value (varies along
// the row) or a per-row scalar (a reduction's result, an input broadcast along the row).
// An elementwise chain is the special case without reductions (the row is then the
// trailing run of axes every input either fully reads or fully broadcasts). Softmax,
// LogSoftmax and LayerNormalization are expanded into reductions + elementwise ops, so
// the decomposed and the ONNX forms of LayerNorm lower the same way.
//
// Only float32 groups whose inputs broadcast to R along static patterns are lowered;
// dims may be symbolic (the generated code takes R's dims at run time).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/graph_queries.h"  // group_external_inputs/outputs, constant_data

namespace fx {

struct KVar {
  bool row = true;       // false: one value per row
  bool literal = false;  // a compile-time constant; c_name is its C literal
  std::string c_name;
  std::string comment;  // the ONNX value it holds, when it is one
};

struct KOp {
  std::string node;       // original node name (comments)
  std::string op;         // ONNX op type of the micro-op, or "ReduceSum"/"ReduceMax"
  std::vector<int> args;  // KVar indices
  int result = -1;
  float alpha = 0, beta = 0;  // LeakyRelu alpha, HardSigmoid alpha/beta, Clip min/max, Elu
  bool mean = false;          // ReduceSum: divide by the row length
  // Exp: the argument is never positive (Softmax's x - rowmax), so the upper clamp of
  // the polynomial exp is not needed (fx_expf_le0).
  bool nonpositive = false;
};

struct KInput {
  ValueId value = kNoValue;
  std::string name;         // ONNX value name
  std::vector<bool> bcast;  // per reference axis (right-aligned): broadcast along it
  int rank = 0;             // the input's own rank
  int var = -1;
  // A bool tensor (one byte per element), read only as Where's condition: the causal
  // mask of a transformer's scores before Softmax. Its pointer is cast to bytes.
  bool mask = false;
};

struct KOutput {
  ValueId value = kNoValue;
  std::string name;
  int var = -1;
  bool drop_row_axes = false;  // a per-row output without the reduced axes (keepdims=0)
};

struct LoweredGroup {
  std::string group_id;
  std::string entry;  // C symbol of the entry point
  std::vector<std::string> node_names;
  std::string ref_shape;  // for the comment: "[batch,seq,768]"
  int rank = 0;
  int row_begin = 0;  // axes [row_begin, rank) form the row
  bool has_reduction = false;
  std::vector<KInput> inputs;    // ABI order
  std::vector<KOutput> outputs;  // ABI order
  std::vector<KVar> vars;
  std::vector<KOp> ops;  // topological
};

struct LowerResult {
  std::optional<LoweredGroup> group;
  std::string reason;  // why not, when group is empty
};

// Adds a variable (a row value or a per-row scalar) to `g`; returns its index.
int add_var(LoweredGroup& g, bool row, const std::string& comment);

// Lowers `nodes` (topological order) of `g`; `entry` names the C function. Group
// outputs are the values read outside the nodes or graph outputs.
LowerResult lower_group(const Graph& g, const std::vector<NodeId>& nodes, const std::string& id,
                        const std::string& entry);

// A C identifier derived from a name ("fg-1a2b" -> "fx_fg_1a2b").
std::string c_identifier(const std::string& name);

}  // namespace fx
