// SPDX-License-Identifier: Apache-2.0
#pragma once
// oneDNN primitives that each compute one slice of a node's output (output channels
// of a Conv, columns or rows or batches of a MatMul), run side by side on the
// runtime's thread pool with one OpenMP thread each. Why: oneDNN's own OpenMP
// regions end in barriers that stall for a whole OS time slice whenever a team
// thread is descheduled (a loaded machine); the pool's caller never waits for a
// thread that has not started (runtime/thread_pool.h). One thread pool for all.

#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "runtime/thread_pool.h"  // OneOmpThread

namespace fx {

struct DnnlPart {
  // Where an argument's data starts in this run: tensor `tensor` of the pointers
  // given to run_parts, plus byte_offset.
  struct Bind {
    int arg;
    int tensor;
    int64_t byte_offset;
  };
  dnnl::primitive prim;
  std::unordered_map<int, dnnl::memory> args;  // memories, incl. fixed weights, scratchpad
  std::vector<Bind> binds;
};

// Attributes every part's primitive_desc is made with (user-managed scratchpad, so
// that parts running at once never share one).
dnnl::primitive_attr part_attr();
// A part for `pd`: its primitive, its own scratchpad, and a memory object (no data
// yet) for each argument in `descs`; `binds` say where their data comes from.
DnnlPart make_part(const dnnl::primitive_desc_base& pd,
                   const std::vector<std::pair<int, dnnl::memory::desc>>& descs,
                   std::vector<DnnlPart::Bind> binds);
// Whether oneDNN fell back to its reference loops for `pd` (no jit kernel for this
// shape, layout, post-ops and ISA): callers that have another path take it.
bool is_reference_impl(const dnnl::primitive_desc_base& pd);
// Weights in the layout `want`, reordered once from plain `user` data at `data`.
dnnl::memory reorder_weights(const dnnl::memory::desc& user, const void* data,
                             const dnnl::memory::desc& want);
// Runs every part, each on one OpenMP thread: a lone part on the calling thread,
// several on the pool. `tensors` are this run's data pointers.
void run_parts(std::vector<DnnlPart>& parts, const std::vector<void*>& tensors, int threads);
// Runs one part on the calling thread (its arguments bound from `tensors`); for kernels
// that schedule their parts themselves.
void run_part(DnnlPart& part, const std::vector<void*>& tensors);
// Splits [0, n) into at most `parts` ranges of at least `min_size` (one range when
// n < 2 * min_size).
std::vector<std::pair<int64_t, int64_t>> split_range(int64_t n, int parts, int64_t min_size);

}  // namespace fx
