// SPDX-License-Identifier: Apache-2.0
// Property test: on random DAGs of up to 500 nodes, at every level, each node is in at
// most one group, the contracted graph is acyclic, and fusion never adds traffic.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "analysis/fusion_finder.h"
#include "test_graphs.h"

namespace fx {
namespace {

Graph random_dag(std::mt19937& rng, int nodes) {
  static const char* kOps[] = {"Relu",   "Neg",       "Add",       "Mul",    "Sigmoid",
                               "MatMul", "ReduceSum", "Transpose", "Custom", "Exp"};
  GraphBuilder b;
  std::vector<ValueId> vals{b.input("x", {16, 16}), b.input("y", {16, 16})};
  auto w = b.constant("w", testing::zeros({16, 16}));
  for (int i = 0; i < nodes; ++i) {
    std::string op = kOps[rng() % 10];
    // Mostly recent values (chains), sometimes far back (long edges that invite cycles).
    auto pick = [&] {
      std::size_t n = vals.size();
      return rng() % 4 == 0 ? vals[rng() % n] : vals[n - 1 - rng() % std::min<std::size_t>(n, 4)];
    };
    std::string name = "n" + std::to_string(i);
    ValueId out;
    if (op == "Add" || op == "Mul")
      out = b.op(op, {pick(), pick()}, {}, name);
    else if (op == "MatMul")
      out = b.op(op, {pick(), w}, {}, name);
    else if (op == "ReduceSum")  // keepdims and broadcast back, so shapes stay [16,16]
      out = b.op("Add",
                 {pick(), b.op(op, {pick()}, {{"axes", std::vector<int64_t>{1}}}, name + "_r",
                               Shape::of({16, 1}))},
                 {}, name);
    else
      out = b.op(op == "Custom" ? "MyOp" : op, {pick()}, {}, name);
    if (op == "Custom") b.graph().node(b.graph().find_node(name)).domain = "com.example";
    vals.push_back(out);
  }
  for (std::size_t i = vals.size() - 3; i < vals.size(); ++i) b.output(vals[i]);
  return b.build();
}

// Contracts the groups and checks the quotient graph for cycles (Kahn).
bool contracted_acyclic(const Graph& g, const AnalysisResult& r) {
  std::vector<int> group(g.node_count());
  for (std::size_t i = 0; i < group.size(); ++i) group[i] = static_cast<int>(i);
  for (std::size_t k = 0; k < r.groups.size(); ++k)
    for (NodeId n : r.groups[k].node_ids)
      group[std::size_t(n)] = static_cast<int>(g.node_count() + k);
  std::unordered_map<int, std::vector<int>> succ;
  std::unordered_map<int, int> indeg;
  for (std::size_t i = 0; i < g.node_count(); ++i) indeg[group[i]] += 0;
  for (std::size_t i = 0; i < g.node_count(); ++i)
    for (ValueId o : g.node(NodeId(i)).outputs)
      for (NodeId c : g.value(o).consumers)
        if (group[i] != group[std::size_t(c)]) {
          succ[group[i]].push_back(group[std::size_t(c)]);
          indeg[group[std::size_t(c)]]++;
        }
  std::vector<int> ready;
  for (auto& [k, d] : indeg)
    if (d == 0) ready.push_back(k);
  std::size_t done = 0;
  while (!ready.empty()) {
    int k = ready.back();
    ready.pop_back();
    ++done;
    for (int s : succ[k])
      if (--indeg[s] == 0) ready.push_back(s);
  }
  return done == indeg.size();
}

TEST(RandomDagProperty, GroupsAreDisjointAcyclicAndNeverAddTraffic) {
  std::mt19937 rng(20261123);
  for (int trial = 0; trial < 24; ++trial) {
    int n = 10 + static_cast<int>(rng() % 490);
    Graph g = random_dag(rng, n);
    for (int level = 0; level <= 3; ++level) {
      FusionOptions o;
      o.opt_level = level;
      o.threshold = (trial % 3) * 0.2;
      AnalysisResult r = analyze_fusion(g, testing::test_profile(), o);
      SCOPED_TRACE("trial " + std::to_string(trial) + " level " + std::to_string(level));
      std::vector<int> seen(g.node_count(), 0);
      for (const auto& gr : r.groups) {
        EXPECT_GE(gr.nodes.size(), 2u);
        EXPECT_LE(gr.nodes.size(), 64u);
        EXPECT_GE(gr.estimate.bytes_saved(), 0);
        for (NodeId id : gr.node_ids) EXPECT_EQ(++seen[std::size_t(id)], 1);
      }
      EXPECT_TRUE(contracted_acyclic(g, r));
      EXPECT_LE(r.bytes_after, r.bytes_before);
      EXPECT_LE(r.kernels_after, r.kernels_before);
      if (level == 0) {
        EXPECT_TRUE(r.groups.empty());
      }
    }
  }
}

}  // namespace
}  // namespace fx
