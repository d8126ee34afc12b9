// SPDX-License-Identifier: Apache-2.0
// The device profile's Winograd records (device/winograd_support.h) against the
// runtime's own decision (runtime/winograd_conv.h): for convolutions of ResNet-like
// shapes, eligible or not, the cost model reading a profile measured on this host
// (calibration) says what the runtime does, with Winograd on and switched off.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "analysis/cost_model.h"
#include "analysis/test_graphs.h"
#include "calibration/cpu_calibration.h"
#include "calibration/host_device.h"
#include "profile/winograd_probe.h"
#include "runtime/winograd_conv.h"

namespace fx {
namespace {

struct ConvCase {
  int64_t ic, oc, ih, oh;
  int64_t stride = 1, group = 1, kernel = 3, pad = 1;
};

// One Conv node: [1, ic, ih, ih] -> [1, oc, oh, oh].
Graph conv_graph(const ConvCase& c) {
  GraphBuilder b;
  auto x = b.input("x", {1, c.ic, c.ih, c.ih});
  auto w = b.constant("w", testing::zeros({c.oc, c.ic / c.group, c.kernel, c.kernel}));
  b.output(b.op("Conv", {x, w},
                {{"pads", std::vector<int64_t>(4, c.pad)},
                 {"strides", std::vector<int64_t>{c.stride, c.stride}},
                 {"group", c.group}},
                "conv", Shape::of({1, c.oc, c.oh, c.oh})));
  return b.build();
}

// The runtime's decision for the Conv kernel of `c` (runtime/dnnl_kernels.cc: the
// eligible geometry, then WinogradConv on `threads` parts).
bool runtime_runs(const ConvCase& c, int threads) {
  const int64_t k = c.kernel, s = c.stride;
  if (!winograd_shape(1, c.ic, c.oc, c.group, c.oh, c.oh, {k, k}, {s, s}, {1, 1})) return false;
  WinogradConvSpec spec;
  spec.ic = c.ic, spec.ih = spec.iw = c.ih;
  spec.oc = c.oc, spec.oh = spec.ow = c.oh;
  spec.pad_top = spec.pad_left = spec.pad_bottom = spec.pad_right = c.pad;
  return winograd_runs(spec, threads);
}

std::vector<ConvCase> cases() {
  std::vector<ConvCase> v;
  for (int64_t map : {7, 14, 28, 56})
    for (int64_t ic : {64, 128, 256, 512})
      for (int64_t oc : {64, 128, 256, 512}) v.push_back({ic, oc, map, map});
  v.push_back({64, 128, 56, 28, 2});          // stride 2
  v.push_back({64, 64, 56, 56, 1, 2});        // grouped
  v.push_back({64, 64, 56, 56, 1, 1, 1, 0});  // 1x1
  v.push_back({48, 48, 56, 56});              // too few channels
  v.push_back({64, 64, 58, 56, 1, 1, 3, 0});  // valid padding
  v.push_back({64, 64, 5, 5});                // too small a map
  return v;
}

int host_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

class WinogradSupportTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("FX_WINOGRAD"); }
  void TearDown() override { unsetenv("FX_WINOGRAD"); }
};

// A profile that asked the runtime about a model's own shapes (what the before/after
// measurement does) agrees with the runtime on every conv, on one thread and on all.
TEST_F(WinogradSupportTest, ProbedShapesAgreeWithTheRuntime) {
  int winograd = 0;
  for (int threads : {1, host_threads()})
    for (const ConvCase& c : cases()) {
      Graph g = conv_graph(c);
      DeviceProfile p = testing::test_profile();
      p.winograd = probe_winograd(winograd_shapes(g), threads);
      const bool analysis = CostModel(g, p).node(g.find_node("conv")).winograd;
      EXPECT_EQ(analysis, runtime_runs(c, threads))
          << c.ic << "->" << c.oc << " " << c.ih << "x" << c.ih << " stride " << c.stride
          << " group " << c.group << " kernel " << c.kernel << " on " << threads << " threads";
      winograd += analysis;
    }
  // Where oneDNN has Winograd kernels (avx512_core), some of these shapes run so.
  if (runtime_runs({64, 64, 56, 56}, 1)) {
    EXPECT_GT(winograd, 0);
  }
}

// The cpu-host profile records the common shapes (cpu_calibration.h), which cover the
// cases above: the cost model on it answers as the runtime does on the executor's
// threads, without asking the runtime.
TEST_F(WinogradSupportTest, TheCpuHostProfileAgreesWithTheRuntime) {
  DeviceProfile p = testing::test_profile();
  p.winograd = host_winograd_support();
  EXPECT_EQ(p.winograd.threads, host_threads());
  EXPECT_EQ(p.winograd.shapes.size(), common_winograd_shapes().size());
  for (const ConvCase& c : cases()) {
    // Valid padding is not among the common shapes: taken as direct (winograd_support.h).
    if (c.kernel == 3 && c.pad == 0) continue;
    Graph g = conv_graph(c);
    EXPECT_EQ(CostModel(g, p).node(g.find_node("conv")).winograd, runtime_runs(c, host_threads()))
        << c.ic << "->" << c.oc << " " << c.ih << "x" << c.ih << " stride " << c.stride;
  }
}

// Resolved for a model (calibration/host_device.h), a cpu-host profile also carries the
// runtime's answers for that model's own convolutions, so shapes outside the common list
// (valid padding, 96 or 48 channels, odd maps) are estimated as they run; other devices
// get no host answers.
TEST_F(WinogradSupportTest, ResolvedForAModelTheProfileAnswersItsOwnShapes) {
  std::vector<ConvCase> uncommon = {{96, 96, 56, 56},
                                    {64, 64, 58, 56, 1, 1, 3, 0},
                                    {96, 192, 30, 30},
                                    {160, 160, 17, 17}};
  for (const ConvCase& c : uncommon) {
    Graph g = conv_graph(c);
    DeviceProfile p = resolve_device("cpu-host", g);
    const NodeId conv = g.find_node("conv");
    ASSERT_TRUE(p.winograd.answer(*CostModel::node_winograd_shape(g, g.node(conv))).has_value())
        << c.ic << "->" << c.oc << " " << c.ih << "x" << c.ih;
    EXPECT_EQ(CostModel(g, p).node(conv).winograd, runtime_runs(c, p.winograd.threads))
        << c.ic << "->" << c.oc << " " << c.ih << "x" << c.ih << " pad " << c.pad;
    DeviceProfile gpu = resolve_device("nvidia-h100", g);
    EXPECT_FALSE(CostModel(g, gpu).node(conv).winograd);
  }
}

// FX_WINOGRAD=0: the runtime runs none, and the records a resolved cpu-host profile
// carries (asked again on every resolve) say so.
TEST_F(WinogradSupportTest, SwitchedOffNoneRuns) {
  setenv("FX_WINOGRAD", "0", 1);
  WinogradSupport w = host_winograd_support();
  for (const auto& a : w.shapes) EXPECT_FALSE(a.runs);
  for (const ConvCase& c : cases()) EXPECT_FALSE(runtime_runs(c, 1));
}

}  // namespace
}  // namespace fx
