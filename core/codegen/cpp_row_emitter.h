// SPDX-License-Identifier: Apache-2.0
#pragma once
// The C++ of one lowered group (cpp_emitter.h), written by one object: the emitter plans
// which row values are buffered and which outputs stream, then writes the function top
// down (cpp_emitter.cc: signature, thread loop, offsets and pointers) and each pass
// over the row (cpp_emitter_pass.cc: its loop, reductions, streaming stores; or
// cpp_emitter_primitives.cc: one call of a prelude primitive). Elementwise chains have a single
// pass and split long rows into chunks so that every thread gets work even when there is only one
// row.

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/row_schedule.h"

namespace fx {

constexpr int kChunk = 4096;  // elements per work item of an elementwise chain
// Rows up to this many elements are prefetched whole, kPrefetchRows rows ahead, while
// a row is computed (the hardware prefetcher stops at page boundaries: a 4 KiB row
// starts cold). Two rows ahead: the loads get a whole row's time to arrive, which one
// row ahead does not leave LayerNorm (its passes are short) when the memory is busy.
constexpr int kPrefetchRow = 16384, kPrefetchRows = 2;
// Elementwise chains: block, and prefetch distance in elements. 8 KiB ahead: one thread
// streaming at ~33 GB/s (half of what two cores get from DRAM here) with a load latency
// of 150-250 ns under load needs 5-8 KiB per input in flight; 2 KiB ahead (512, before)
// covered ~60 ns.
constexpr int kBlock = 256, kAhead = 2048;
// Independent accumulators of a row kernel's reduction (see emit_reduce_loop): FX_LANES,
// defined in the prelude by the target's vector width.
inline constexpr const char* kLanes = "FX_LANES";

class CppRowEmitter {
 public:
  explicit CppRowEmitter(const LoweredGroup& lowered);
  std::string emit();

 private:
  // Planning.
  void plan_buffers();
  void plan_prefetch();
  // The function top down.
  void emit_signature();
  void emit_thread_loop_head();
  void emit_row_offsets();
  void emit_row_pointers();
  void emit_scalars(int ready);
  std::string finish();
  // One pass over the row (cpp_emitter_pass.cc).
  void emit_pass(int p);
  std::string declare_accumulators(const std::vector<const KOp*>& reds);
  std::string pass_body(int p, bool lanes);
  void emit_reduce_loop(const std::string& body, const std::string& clauses, const std::string& a,
                        const std::string& b, const std::string& ind, int p);
  void emit_block_loop(int p, const std::string& body, const std::string& clauses,
                       const std::vector<std::size_t>& streamed, bool reduces);
  int emit_row_loop(int p, const std::string& body, const std::string& clauses);
  void emit_lane_combine(const std::vector<const KOp*>& reds);
  void emit_pass_end(int p, const std::vector<const KOp*>& reds, bool stored_by_block,
                     int scaled_out);
  std::string row_primitive(int p, const std::vector<const KOp*>& reds);
  std::string row_max_primitive(const KOp& r);
  std::string exp_sum_primitive(int p, const KOp& r, const std::vector<const KOp*>& row_ops);
  std::string norm_affine_stream(int p);
  // Where values are.
  std::string ref(int v, int p) const;
  int shifted(const KOp& op) const;
  bool computed_in(int v, int p) const;
  bool inverted_divisor(int v) const;
  int output_index(int v) const;
  std::string row_ptr(int v) const;
  std::vector<const KOp*> row_ops_in(int p) const;

  const LoweredGroup g_;
  const Schedule s_;
  const int R_, K_;  // rank of the reference shape; the row is axes [K_, R_)
  std::ostringstream o_;
  std::vector<bool> is_input_;  // per var
  std::vector<int> slot_;       // per var: its row buffer, -1 none
  int nslots_ = 0;
  std::vector<int> alias_;        // per var: the output k it lives in, -1 none
  std::vector<int> stream_slot_;  // per output: its streaming buffer, -1 none
  int nstream_ = 0;
  bool odometer_ = false;            // outer offsets stepped row by row
  std::vector<std::size_t> row_pf_;  // inputs whose later rows are prefetched
  int pf_pass_ = -1;                 // in this pass
  int carry_input_ = -1;             // the input whose row max is carried from the previous row
  bool carried_ = false;             // an exp pass computes it
};

}  // namespace fx
