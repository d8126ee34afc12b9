#pragma once
// The cost model: bytes moved, FLOPs and launches of a node or of a fused group, and the
// time they take on a device profile:
//
//   time = max(bytes / memory_bandwidth, flops / peak_flops) + launches * launch_overhead
//
// A node reads each distinct input once and writes each output once (constants are read
// like any input). A group reads only its external inputs and writes only the values
// that leave it (graph outputs and values with a consumer outside); intermediates stay
// on chip. A group is one launch.
//
// Footprint of a group = the largest member tile (anchor: a 128x128 output tile plus
// 64-deep input panels; reduction: the reduced rows of a tile; other ops: a 1024-element
// tile per operand) + one 1024-element tile per intermediate kept on chip.
//
// Any needed shape that is not static makes the estimate unknown (known == false, with
// the reason), never a guess.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/device_profile.h"
#include "analysis/op_kind.h"
#include "ir/graph.h"

namespace fx {

struct Cost {
  bool known = true;
  std::string unknown_reason;  // e.g. "value 'x' has shape [batch,3]" when !known
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double flops = 0;
  int launches = 1;
  int64_t footprint_bytes = 0;  // on-chip working set of the largest tile
  double time_s = 0;            // on `profile`
  std::string profile;          // name of the DeviceProfile that produced time_s

  int64_t bytes() const { return bytes_read + bytes_written; }
};

class CostModel {
 public:
  // Precomputes every node's cost (linear in the graph size). The graph must outlive it.
  CostModel(const Graph& g, DeviceProfile profile);

  const DeviceProfile& profile() const { return profile_; }
  const Graph& graph() const { return g_; }
  const Cost& node(NodeId id) const { return nodes_[static_cast<std::size_t>(id)]; }
  const OpClass& op_class(NodeId id) const { return classes_[static_cast<std::size_t>(id)]; }
  // Cost of running `members` as one fused kernel.
  Cost group(std::span<const NodeId> members) const;
  // Sum of the members' unfused costs.
  Cost unfused(std::span<const NodeId> members) const;
  double time(double bytes, double flops, int launches) const;

  // FLOPs and tile footprint of one node (exposed for tests); nullopt-free: 0 when unknown.
  static double node_flops(const Graph& g, const Node& n, OpKind kind);
  static int64_t node_tile_bytes(const Graph& g, const Node& n, OpKind kind);

  static constexpr int64_t kElementTile = 1024;
  static constexpr int64_t kAnchorTile = 128;
  static constexpr int64_t kAnchorDepth = 64;

 private:
  const Graph& g_;
  DeviceProfile profile_;
  std::vector<int64_t> value_bytes_;  // per value, 0 when unknown
  std::vector<Cost> nodes_;
  std::vector<OpClass> classes_;
};

}  // namespace fx
