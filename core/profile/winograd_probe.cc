// SPDX-License-Identifier: Apache-2.0
#include "profile/winograd_probe.h"

#include <algorithm>
#include <thread>

#include "analysis/cost_model.h"
#include "runtime/winograd_conv.h"

namespace fx {

WinogradSupport probe_winograd(const std::vector<WinogradShape>& shapes, int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  WinogradSupport w;
  w.threads = threads;
  for (const WinogradShape& s : shapes) {
    bool runs = winograd_shape(1, s.ic, s.oc, 1, s.oh, s.ow, {3, 3}, {1, 1}, {1, 1});
    if (runs) {
      WinogradConvSpec spec;
      spec.ic = s.ic, spec.ih = s.ih, spec.iw = s.iw;
      spec.oc = s.oc, spec.oh = s.oh, spec.ow = s.ow;
      spec.pad_top = s.pad_top, spec.pad_left = s.pad_left;
      spec.pad_bottom = s.pad_bottom, spec.pad_right = s.pad_right;
      runs = winograd_runs(spec, threads);
    }
    w.shapes.push_back({s, runs});
  }
  return w;
}

std::vector<WinogradShape> winograd_shapes(const Graph& g) {
  std::vector<WinogradShape> out;
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    auto s = CostModel::node_winograd_shape(g, g.node(static_cast<NodeId>(i)));
    if (s && std::find(out.begin(), out.end(), *s) == out.end()) out.push_back(*s);
  }
  return out;
}

}  // namespace fx
