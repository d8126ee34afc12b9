// SPDX-License-Identifier: Apache-2.0
#pragma once
// The canonical form every command and the explorer analyse, run and export: the
// model as exported, with what an exporter's habits add and no kernel runs taken out.
// ONNX Runtime's level-1 ("basic") graph optimizations are the reference; the passes
// run in this order, each disable-able by name:
//
//   constant-to-initializer  Constant nodes become initializers (paddle2onnx, tf2onnx
//                            and PyTorch without constant folding keep weights there)
//   half-to-float            a model computing in float16 behind a float32 interface
//                            computes in float32, as ONNX Runtime's CPU provider does
//                            (half_to_float.cc says when it does not apply); its Casts
//                            to float16 become Identity for the next pass
//   identity-elimination     readers of an Identity read its input (PyTorch emits
//                            Identity for shared or equal parameters); an Identity
//                            whose output is a graph output stays
//   shape-folding            Shape / Size of a tensor whose shape is known become
//                            constants (needs shape inference; dims bound or assumed)
//   constant-folding         nodes whose inputs are all constant, of a fixed set of
//                            shape and small arithmetic ops (constant_folding.h), are
//                            evaluated here; this carries Shape -> Gather -> Unsqueeze
//                            -> Concat -> Reshape chains down to a constant shape
//   conv-bn-folding          a BatchNormalization (inference mode, constant parameters)
//                            that alone reads a Conv with constant weights is folded
//                            into new weights "<conv>.folded_W/B": an export with BN kept
//                            becomes the export with BN folded (ONNX Runtime's basic
//                            level does the same); a BN it cannot fold (statistics not
//                            constant, not after a Conv, Conv output read twice) stays
//                            and the analysis may still fold it inside a group
//   dead-nodes               nodes nothing reads (and that are no graph output) go
//   duplicate-initializers   small initializers (held in memory, not in the model file)
//                            with the same type, dims and bytes merge
//
// Layering: fx_transforms stands on fx_ir only. Folding does not borrow the runtime's
// kernels (fx_runtime is a layer above and the importer, fx_onnx, canonicalizes at
// load): the folding pass evaluates its own fixed op set, on small tensors only
// (kFoldLimitBytes), and leaves every other node alone.
//
// Graph outputs are never removed or renamed. A graph holding a node with a subgraph
// (If/Loop/Scan) may read outer values by name from inside the body, invisibly to the
// IR's inputs lists: then no pass removes or renames a value (identity-elimination,
// dead-nodes and duplicate-initializers are skipped; the other passes keep names).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fx::transforms {

// The passes' names, in the order they run.
const std::vector<std::string>& canonical_pass_names();

struct CanonicalOptions {
  bool enabled = true;             // false: the graph as imported (--no-canonicalize)
  std::set<std::string> disabled;  // pass names (--disable-pass NAME)
};

// What one pass did.
struct PassRecord {
  std::string pass;
  bool ran = false;             // false when disabled or skipped
  std::string skipped_because;  // "disabled", "graph has subgraphs", ...
  int nodes_removed = 0;
  std::map<std::string, int> removed_ops;  // op type -> nodes removed
  // Constants that came through Identity/Constant, by the name their readers read now.
  std::vector<std::string> weights;
  int64_t weight_bytes = 0;
  int merged = 0;  // duplicate-initializers: values merged
  // half-to-float: float16 values made float32, Casts left float32 -> float32 (Identity).
  int widened = 0;
  int casts_to_identity = 0;
  // conv-bn-folding: each removed node's name -> the node that now computes it.
  std::map<std::string, std::string> folded_into;
};

struct CanonicalRecord {
  bool enabled = false;
  int nodes_before = 0;
  int nodes_after = 0;
  double ms = 0;
  std::vector<PassRecord> passes;
  // "canonical: 139 Constant -> initializers, removed 72 Identity, ...; 500 -> 289 nodes"
  // or "canonical: nothing to fold (N nodes)".
  std::string summary() const;
};

// Throws fx::Error for an unknown pass name in options.disabled (naming the known ones).
void check_pass_names(const CanonicalOptions& options);

// Runs the enabled passes; returns the canonical graph (validated) and fills `record`.
Graph canonicalize(const Graph& g, const CanonicalOptions& options, CanonicalRecord* record);

// True when a node carries a graph attribute (If/Loop/Scan bodies).
bool has_subgraph(const Node& n);

}  // namespace fx::transforms
