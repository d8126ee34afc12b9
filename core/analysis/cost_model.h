// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cost model: bytes moved, FLOPs and launches of a node or of a fused group, and the
// time they take on a device profile, per kernel:
//
//   time = launches * launch_overhead
//          + max(bytes / bandwidth(class, bytes), flops / flops(class))
//
// with effective rates per KernelClass (device/device_profile.h: elementwise, reduction, conv,
// depthwise, matmul, data_movement); an uncalibrated profile uses its one bandwidth and
// peak for every class, `fxc calibrate --from` fits them to measured kernel times. The
// bandwidth depends on the bytes the kernel touches where the profile has a working-set
// curve (device_profile.h: bandwidth_curve): a kernel whose operands stay in L2 streams
// them faster than one that goes to memory.
//
// An unfused spatial Conv also converts its activations to NHWC and back on every call
// (Cost::relayout_bytes), at the data-movement rate; the fused conv does not (the
// layout plan), and neither side does where both run Winograd (both do):
//   time += relayout_bytes / bandwidth(data_movement, relayout_bytes)
//
// A node reads each distinct input once and writes each output once (constants are read
// like any input). A group reads only its external inputs and writes only the values
// that leave it (graph outputs and values with a consumer outside); intermediates stay
// on chip. A group is one launch. A group with an anchor (Conv, MatMul, ...) is timed as
// the anchor's own kernel (its class, bytes and FLOPs) plus its epilogue applied to each
// output tile in cache (folded BatchNormalization, activations, bias/residual adds),
// which costs only the bytes it moves beyond the anchor's inputs (its output, a
// residual, parameters) at the elementwise bandwidth:
//   time = anchor's time + epilogue_bytes / bandwidth(elementwise)
// Other groups are one loop: a group of copies only is data_movement, a group with a
// reduction a row kernel (reduction class), the rest elementwise, with the members'
// FLOPs summed.
// A kernel of several nodes is *fused*: the device profile scales its class's time by a
// fused factor, adds the class's fixed cost per fused kernel (a generated loop's or row
// kernel's setup) and times the epilogue at a fused epilogue bandwidth
// (device/device_profile.h; 1, 0 and the elementwise bandwidth until `fxc calibrate
// --from` fits them to the fused kernels of a measurement):
//   time = launch + fixed(class)
//          + scale(class) * max(bytes / bandwidth(class, bytes), flops / flops(class))
//          + epilogue_bytes / epilogue_bandwidth(class)
//
// Footprint of a group = the largest member tile (anchor: a 128x128 output tile plus
// 64-deep input panels; reduction: the reduced rows of a tile; other ops: a 1024-element
// tile per operand) + one 1024-element tile per intermediate kept on chip.
//
// Any needed shape that is not static makes the estimate unknown (known == false, with
// the reason), never a guess.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/op_kind.h"
#include "device/device_profile.h"
#include "ir/graph.h"

namespace fx {

struct Cost {
  bool known = true;
  std::string unknown_reason;  // e.g. "value 'x' has shape [batch,3]" when !known
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  // Of bytes_read, what constant inputs (weights, biases, folded parameters) account for:
  // the rest is activations, which layouts and reorders act on (weights are reordered
  // once and kept).
  int64_t constant_bytes = 0;
  // Activation bytes (input and output) that the runtime's unfused kernel converts
  // between NCHW and the layout its primitive wants on every call: a Conv with a
  // spatial kernel larger than 1x1 and one group (runtime/dnnl_kernels.cc reorders
  // its input to NHWC and its output back; 1x1 and depthwise convs run on NCHW). 0 for
  // other nodes and for fused groups, whose layouts the codegen's layout plan decides.
  int64_t relayout_bytes = 0;
  // Channel planes (batch x channels) that the runtime's unfused depthwise kernel
  // (runtime/depthwise_conv.cc, NCHW) sets up one by one: each plane is copied with its
  // padding into stride phases and computed on its own, a fixed cost per plane that
  // dominates small maps (7x7). 0 for other nodes and for fused groups (the fused
  // depthwise loops over channels in NHWC).
  int64_t planes = 0;
  // The runtime runs this Conv (a group: its anchor) with oneDNN's Winograd convolution
  // in the unfused and in the fused program alike, as the device profile records
  // (device/winograd_support.h: the runtime's answers for 3x3 stride-1 convolutions).
  // Both then reorder their activations into oneDNN's blocked layout and back on every
  // call, and compute alike: fusion saves no relayout and does not change the anchor's
  // implementation (saving_model.h). relayout_bytes still says what the unfused kernel
  // converts.
  bool winograd = false;
  double flops = 0;
  int launches = 1;
  int64_t footprint_bytes = 0;  // on-chip working set of the largest tile
  double time_s = 0;            // on `profile`
  std::string profile;          // name of the DeviceProfile that produced time_s
  KernelClass kernel_class = KernelClass::Elementwise;  // whose rates time_s used
  // A fused anchor group: the anchor's own traffic and its epilogue's (timed apart).
  int64_t anchor_bytes = -1;  // -1: not an anchor group (time from bytes())
  int64_t epilogue_bytes = 0;
  bool fused = false;  // one kernel for several nodes (timed with the fused rates)

  int64_t bytes() const { return bytes_read + bytes_written; }
};

// Adds one kernel's traffic, work, launches and time to `sum` (kernels run one after
// another: times add, the largest working set counts); an unknown cost makes the sum
// unknown with its reason. Relayout bytes and planes are the caller's to add: only an
// unfused sum carries them.
inline void add_kernel_cost(Cost& sum, const Cost& c) {
  if (!c.known && sum.known) sum.known = false, sum.unknown_reason = c.unknown_reason;
  sum.bytes_read += c.bytes_read;
  sum.bytes_written += c.bytes_written;
  sum.constant_bytes += c.constant_bytes;
  sum.flops += c.flops;
  sum.launches += c.launches;
  sum.time_s += c.time_s;
  sum.footprint_bytes = std::max(sum.footprint_bytes, c.footprint_bytes);
}

// What the time formula needs of one kernel, without a device: enough to time it again on
// another profile (fxc calibrate --from re-times measured kernels and groups with these).
struct KernelTerms {
  KernelClass kernel_class = KernelClass::Elementwise;
  double bytes = 0;
  double flops = 0;
  int launches = 1;
  double epilogue_bytes = 0;  // moved by an anchor's fused epilogue
  bool fused = false;         // a kernel of several nodes: the profile's fused rates apply
  double relayout_bytes = 0;  // Cost::relayout_bytes (0: none, or a result written before it)
  // Cost::constant_bytes (weights, biases) and Cost::planes; 0 in results written before
  // them (the saving model's anchor_weights and anchor_planes terms are then 0).
  double constant_bytes = 0;
  double planes = 0;
  bool winograd = false;  // Cost::winograd; false in results written before it
};
inline KernelTerms terms_of(const Cost& c) {
  return {c.kernel_class,
          double(c.anchor_bytes >= 0 ? c.anchor_bytes : c.bytes()),
          c.flops,
          c.launches,
          double(c.epilogue_bytes),
          c.fused,
          double(c.relayout_bytes),
          double(c.constant_bytes),
          double(c.planes),
          c.winograd};
}
inline double kernel_time(const DeviceProfile& p, const KernelTerms& t);
// What an unfused kernel spends converting its activations between layouts on every
// call (Cost::relayout_bytes, at the data-movement rate for that many bytes): 0 for a
// Winograd conv, whose reorders the fused one makes alike (and which its class's rate
// carries), and for fused kernels (the layout plan keeps their activations in the
// layout they want).
inline double relayout_time(const DeviceProfile& p, const KernelTerms& t) {
  if (t.fused || t.winograd || !(t.relayout_bytes > 0)) return 0;
  return t.relayout_bytes / p.bandwidth(KernelClass::DataMovement, t.relayout_bytes);
}

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
  // The time of `launches` kernels of `c` moving `bytes` and computing `flops`.
  double time(double bytes, double flops, int launches,
              KernelClass c = KernelClass::Elementwise) const;
  static double time(const DeviceProfile& p, double bytes, double flops, int launches,
                     KernelClass c);

  // The class of one node's kernel (Conv with group == input channels: depthwise).
  static KernelClass node_class(const Graph& g, const Node& n, OpKind kind);

  // FLOPs and tile footprint of one node (exposed for tests); nullopt-free: 0 when unknown.
  static double node_flops(const Graph& g, const Node& n, OpKind kind);
  static int64_t node_tile_bytes(const Graph& g, const Node& n, OpKind kind);
  // Cost::relayout_bytes of one node whose cost (bytes, constant_bytes) is `c`.
  static int64_t node_relayout_bytes(const Graph& g, const Node& n, const Cost& c);
  // Cost::planes of one node: batch x channels of a depthwise Conv, else 0.
  static int64_t node_planes(const Graph& g, const Node& n);
  // The geometry of a Conv the runtime may run with Winograd (constant weights and bias,
  // one image, 3x3, stride 1, no dilation, no groups, static shapes); nullopt otherwise.
  static std::optional<WinogradShape> node_winograd_shape(const Graph& g, const Node& n);
  // Cost::winograd of one node: its Winograd shape, which `p` records the runtime runs so.
  static bool node_winograd(const Graph& g, const Node& n, const DeviceProfile& p);

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

inline double kernel_time(const DeviceProfile& p, const KernelTerms& t) {
  if (!t.fused)
    return CostModel::time(p, t.bytes, t.flops, t.launches, t.kernel_class) +
           t.epilogue_bytes / p.bandwidth(KernelClass::Elementwise, t.epilogue_bytes) +
           relayout_time(p, t);
  if (t.launches == 0 && t.bytes == 0 && t.flops == 0) return 0;
  const KernelClass c = t.kernel_class;
  return t.launches * (p.launch_overhead_s + p.fused_fixed_s(c)) +
         p.fused_scale(c) * std::max(t.bytes / p.bandwidth(c, t.bytes), t.flops / p.flops(c)) +
         t.epilogue_bytes / p.epilogue_bandwidth(c, t.epilogue_bytes);
}

}  // namespace fx
