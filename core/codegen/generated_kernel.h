#pragma once
// Runtime kernels behind a fused step:
//   GeneratedKernel  calls a compiled row kernel (cpp_emitter.h) through its C entry
//   CompositeKernel  runs several kernels in sequence inside one step: the members of
//                    a group that fell back to the runtime's kernels, or an anchor's
//                    runtime kernel followed by a generated epilogue

#include <memory>
#include <vector>

#include "codegen/kernel_ir.h"
#include "runtime/kernel.h"

namespace fx {

class CompiledLibrary;

using RowKernelFn = void (*)(const float* const*, float* const*, const int64_t*, int);

class GeneratedKernel final : public Kernel {
 public:
  // Keeps `lib` loaded while the kernel lives. Step inputs/outputs are in the order of
  // g.inputs / g.outputs.
  GeneratedKernel(const LoweredGroup& g, std::shared_ptr<CompiledLibrary> lib);
  void run(KernelContext& ctx) override;

 private:
  struct In {
    std::vector<bool> bcast;
    int rank;
  };
  struct Out {
    bool row;
    bool drop_row_axes;
  };
  std::string entry_;
  int rank_, row_begin_;
  std::vector<In> ins_;
  std::vector<Out> outs_;
  std::shared_ptr<CompiledLibrary> lib_;
  RowKernelFn fn_;
  std::vector<int64_t> dims_;
  std::vector<const float*> in_ptrs_;
  std::vector<float*> out_ptrs_;
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
