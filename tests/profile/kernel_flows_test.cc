// SPDX-License-Identifier: Apache-2.0
// Flow links of the before/after view: each before kernel whose node a fused after
// kernel covers is linked to that kernel; kernels that ran unchanged are not linked.
#include "profile/kernel_flows.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace fx {
namespace {

KernelEvent kernel(std::vector<std::string> nodes, double start, double duration, int run = 0) {
  KernelEvent e;
  e.name = nodes.size() == 1 ? nodes[0] : "fused";
  e.nodes = std::move(nodes);
  e.start_us = start;
  e.duration_us = duration;
  e.run = run;
  return e;
}

std::set<std::pair<std::size_t, std::size_t>> links(const std::vector<KernelFlow>& flows) {
  std::set<std::pair<std::size_t, std::size_t>> s;
  for (const KernelFlow& f : flows) s.insert({f.before, f.after});
  return s;
}

TEST(KernelFlows, EachBeforeKernelLinksToTheFusedKernelItBecame) {
  Timeline before, after;
  // conv, bn, relu -> one fused kernel; pool unchanged; mul, add -> another fused kernel.
  for (const char* n : {"conv", "bn", "relu", "pool", "mul", "add"})
    before.events.push_back(kernel({n}, double(before.events.size()) * 10, 9));
  after.events.push_back(kernel({"conv", "bn", "relu"}, 0, 12));
  after.events.push_back(kernel({"pool"}, 12, 9));
  after.events.push_back(kernel({"mul", "add"}, 21, 8));
  const std::set<std::pair<std::size_t, std::size_t>> want = {
      {0, 0}, {1, 0}, {2, 0}, {4, 2}, {5, 2}};
  EXPECT_EQ(links(kernel_flows(before, after)), want);
}

TEST(KernelFlows, RunsLinkWithinThemselvesAndUnknownNodesAreSkipped) {
  Timeline before, after;
  before.events = {kernel({"a"}, 0, 1, 0), kernel({"b"}, 1, 1, 0), kernel({"a"}, 5, 1, 1),
                   kernel({"b"}, 6, 1, 1), kernel({"gone"}, 7, 1, 1)};
  after.events = {kernel({"a", "b"}, 0, 1, 0), kernel({"a", "b"}, 5, 1, 1)};
  const std::set<std::pair<std::size_t, std::size_t>> want = {{0, 0}, {1, 0}, {2, 1}, {3, 1}};
  EXPECT_EQ(links(kernel_flows(before, after)), want);
  EXPECT_TRUE(kernel_flows(before, Timeline{}).empty());
}

}  // namespace
}  // namespace fx
