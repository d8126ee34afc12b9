// SPDX-License-Identifier: Apache-2.0
// The profiler's timeline nests the kernels a Loop body runs under the Loop: one
// event per body step per iteration, named by its path, inside the Loop's time span,
// and left out of the kernel table and the totals.

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "profile/profiler.h"

namespace fx {
namespace {

// x[4] -> Loop(M = 3 trips, no cond; carried s = s + x) -> s_final
Graph loop_graph() {
  GraphBuilder body;
  auto iter = body.input("i", {}, DType::Int64);
  auto cond = body.input("c_in", {}, DType::Bool);
  auto s_in = body.input("s_in", {4});
  (void)iter;
  Value x_outer;
  x_outer.name = "x";
  x_outer.dtype = DType::Float32;
  x_outer.shape = Shape::of({4});
  const ValueId x_ref = body.graph().add_value(std::move(x_outer));
  body.graph().add_outer_ref(x_ref);
  body.output(body.op("Identity", {cond}, {}, "keep_going", Shape::scalar(), DType::Bool));
  body.output(body.op("Add", {s_in, x_ref}, {}, "accumulate"));
  auto body_g = std::make_shared<const Graph>(body.build());

  GraphBuilder b;
  auto x = b.input("x", {4});
  auto m = b.constant("M", TensorData::from_int64s({}, {3}));
  auto s0 = b.constant("s0", TensorData::from_floats({4}, {0, 0, 0, 0}));
  auto y = b.op("Loop", {m, kNoValue, s0, x}, {{"body", SubgraphRef{"body", 2, body_g}}}, "loop",
                Shape::of({4}), DType::Float32);
  b.graph().node(b.graph().find_node("loop")).implicit_inputs = 1;
  b.output(y);
  return b.build();
}

TEST(ControlFlowProfile, BodyKernelsNestUnderTheLoop) {
  const Graph g = loop_graph();
  ProfileOptions o;
  o.runs = 2;
  o.warmup = 1;
  o.threads = 1;
  ProfileResult r = Profiler(o).profile(g);
  // Three trips: s = 3x.
  ASSERT_EQ(r.outputs.size(), 1u);
  const auto x = r.inputs.at("x").to_floats();
  const auto s = r.outputs[0].to_floats();
  for (std::size_t i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(s[i], 3 * x[i]);

  for (int run = 0; run < 2; ++run) {
    const KernelEvent* loop = nullptr;
    int nested = 0;
    for (const KernelEvent& e : r.timeline.events) {
      if (e.run != run) continue;
      if (e.name == "loop") loop = &e;
      if (e.name == "loop/body/accumulate") {
        ++nested;
        EXPECT_EQ(e.args.at("depth"), "1");
        EXPECT_EQ(e.args.at("parent"), "loop");
      }
    }
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(nested, 3) << "one Add per trip";
    for (const KernelEvent& e : r.timeline.events) {
      if (e.run != run || !e.args.count("depth")) continue;
      EXPECT_GE(e.start_us, loop->start_us);
      EXPECT_LE(e.end_us(), loop->end_us() + 1e-3);
    }
  }
  // The kernel table has the Loop only: its time already holds the body's.
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].name, "loop");
}

}  // namespace
}  // namespace fx
