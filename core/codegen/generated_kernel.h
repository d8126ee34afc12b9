// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runtime kernels behind a fused step:
//   GeneratedKernel  calls a compiled row kernel (cpp_emitter.h) through its C entry,
//                    in slices over the runtime's thread pool
//   CompositeKernel  runs several kernels in sequence inside one step: the members of
//                    a group that fell back to the runtime's kernels, or an anchor's
//                    runtime kernel followed by a generated epilogue

#include <memory>
#include <vector>

#include "codegen/kernel_ir.h"
#include "runtime/kernel.h"
#include "runtime/overwrite_input.h"

namespace fx {

class CompiledLibrary;

using RowKernelFn = void (*)(const float* const*, float* const*, const int64_t*, int);

class GeneratedKernel final : public Kernel, public OverwritesInput {
 public:
  // Keeps `lib` loaded while the kernel lives. Step inputs/outputs are in the order of
  // g.inputs / g.outputs.
  GeneratedKernel(const LoweredGroup& g, std::shared_ptr<CompiledLibrary> lib);
  // Runs on the runtime's thread pool, in slices of one axis (see find_cut).
  void run(KernelContext& ctx) override;

  // For a kernel that interleaves this one with its own work (matmul_epilogue.h):
  // bind() checks ctx's inputs and allocates its outputs, as run() does first; then
  // run_slice(b, e) computes indices [b, e) of cut_axis() of the reference shape, on
  // the calling thread. cut_axis() is -1 when the work cannot be cut: run_slice(0,
  // cut_length()) then computes everything.
  void bind(KernelContext& ctx);
  int cut_axis() const { return cut_; }
  int64_t cut_length() const { return cut_ < 0 ? 1 : dims_[static_cast<std::size_t>(cut_)]; }
  const std::vector<int64_t>& dims() const { return dims_; }  // the reference shape, bound
  void run_slice(int64_t begin, int64_t end);
  // An elementwise group (no reduction) with one output over the whole reference shape
  // may write it over an input of that shape (not broadcast, float32): each element of
  // the output is stored after the elements of the inputs it is computed from are read,
  // at the same index. So the memory plan may give the output that input's slot when
  // the input dies here, as an unfused unary op's output takes its input's: without it
  // a fused step holds a large input and a large output together that the unfused
  // chain, through smaller intermediates, never held at once.
  int overwritable_input() const override;

 private:
  struct In {
    std::vector<bool> bcast;
    int rank;
    bool mask;  // bool, one byte per element (KInput::mask)
  };
  struct Out {
    bool row;
    bool drop_row_axes;
  };
  void find_cut();

  std::string entry_;
  int rank_, row_begin_;
  bool has_reduction_;
  int64_t cost_;  // work per element of the reference shape (parallel_for's units)
  std::vector<In> ins_;
  std::vector<Out> outs_;
  std::shared_ptr<CompiledLibrary> lib_;
  RowKernelFn fn_;
  std::vector<int64_t> dims_;
  std::vector<const float*> in_ptrs_;
  std::vector<float*> out_ptrs_;
  int64_t numel_ = 0;
  int cut_ = -1;                             // bound: the axis slices are taken along
  std::vector<int64_t> in_step_, out_step_;  // elements per index of the cut axis
};

struct SubStep {
  std::shared_ptr<Kernel> kernel;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::string name;
};

class CompositeKernel final : public Kernel {
 public:
  // `inputs`/`outputs` are the step's (ctx order); values produced by one sub-step and
  // read by a later one live in buffers owned by this kernel.
  CompositeKernel(std::vector<SubStep> steps, std::vector<ValueId> inputs,
                  std::vector<ValueId> outputs);
  void run(KernelContext& ctx) override;

 private:
  class Inner;
  std::vector<SubStep> steps_;
  std::vector<ValueId> inputs_, outputs_;
  std::vector<std::unique_ptr<AlignedBuffer>> buffers_;  // one per internal value
  std::vector<ValueId> internal_;
};

}  // namespace fx
