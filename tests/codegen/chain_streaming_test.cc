// SPDX-License-Identifier: Apache-2.0
// Elementwise chains large enough (>= 16 MiB) that their output leaves through
// streaming stores, block by block: lengths that are not a multiple of the block (256)
// or of a vector, rows that do not start on a cache line, several threads. The result
// must match the unfused runtime everywhere, the last partial block included.

#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

// x * 1.5 + 0.25 -> Sigmoid -> * x (the --bandwidth chain).
Graph gate_chain(const std::vector<int64_t>& dims) {
  GraphBuilder b;
  auto x = b.input("x", dims);
  auto c = [&](const char* name, float v) {
    return b.constant(name, TensorData::from_floats({}, {v}));
  };
  auto y = b.op("Mul", {x, c("a", 1.5f)}, {}, "scale");
  y = b.op("Add", {y, c("b", 0.25f)}, {}, "shift");
  y = b.op("Sigmoid", {y}, {}, "sig");
  b.output(b.op("Mul", {y, x}, {}, "gate"));
  return b.build();
}

void check_chain(const std::vector<int64_t>& dims) {
  SCOPED_TRACE(dims_str(dims));
  Graph g = gate_chain(dims);
  std::vector<FusionGroup> groups{
      testing::make_group("fg-chain", {"scale", "shift", "sig", "gate"})};
  const std::string src = generate_group_source(g, groups[0]);
  // Each block is streamed out right after it is computed, not the whole chunk after.
  EXPECT_NE(src.find("fx_store_stream(q0 + jb, d0 + (jb - j0), jb1 - jb)"), std::string::npos)
      << src;
  EXPECT_EQ(src.find("fx_store_stream(q0 + j0"), std::string::npos) << src;
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("chain_streaming");
  opt.stem = "chain_streaming_test";
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_TRUE(p.note.empty()) << p.note;
  ASSERT_EQ(p.groups.at(0).outcome, GroupOutcome::Compiled) << p.groups[0].detail;
  auto in = testing::seeded_inputs(g, 11);
  ExecutorOptions eo;
  eo.threads = 3;
  auto actual = Executor(g, p.steps, eo).run(in);
  auto expected = Executor(g, eo).run(in);
  const auto d = testing::compare(expected, actual);
  EXPECT_LT(d.max_rel, 1e-5) << "max abs " << d.max_abs;
}

TEST(ChainStreaming, LongVectorWithAPartialLastBlock) {
  // 4194304 + 4099 floats: 16 MiB + 16 KiB, chunks of 4096, the last one 3 floats.
  check_chain({4194304 + 4099});
}

TEST(ChainStreaming, RowsOffCacheLinesWithAPartialBlockPerRow) {
  // Rows of 1025 floats (chunks of one row: blocks of 256 then 1), 16.8 MB.
  check_chain({4100, 1025});
}

}  // namespace
}  // namespace fx
