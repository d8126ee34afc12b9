// SPDX-License-Identifier: Apache-2.0
#include "cuda_runtime/cuda_executor.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>

#include "codegen/kernel_compiler.h"
#include "cuda_plan/copy_plan.h"
#include "cuda_plan/cuda_compile.h"
#include "cuda_plan/cuda_source.h"
#include "cuda_plan/kernel_params.h"
#include "cuda_runtime/cublaslt_ops.h"
#include "cuda_runtime/cuda_error.h"
#include "cuda_runtime/cudnn_ops.h"
#include "ir/graph_queries.h"
#include "util/error.h"

namespace fx::cuda {

namespace {

using GeneratedFn = int (*)(const float* const*, float* const*, const int64_t*, void*);
using CopyFn = int (*)(const void*, void*, int, const int64_t*, const int64_t*, const int64_t*,
                       int64_t, int64_t, int, void*);
using CompareFn = int (*)(const void*, const void*, void*, int, const int64_t*, const int64_t*,
                          const int64_t*, int, int, void*);
using GatherFn = int (*)(const void*, const void*, void*, int64_t, int64_t, int64_t, int64_t, int,
                         int, void*);

constexpr std::size_t kMatmulWorkspace = 32u << 20;  // cuBLASLt's recommendation for Hopper

struct DeviceAllocation {
  void* ptr = nullptr;
  explicit DeviceAllocation(int64_t bytes, const std::string& what) {
    if (bytes > 0)
      check_cuda(cudaMalloc(&ptr, static_cast<std::size_t>(bytes)), "allocating " + what);
  }
  ~DeviceAllocation() {
    if (ptr) cudaFree(ptr);
  }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
};

}  // namespace

struct CudaExecutor::Impl {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t lt = nullptr;
  std::unique_ptr<DeviceAllocation> weights, inputs, arena, workspace, zeros;
  std::shared_ptr<CompiledLibrary> lib;
  std::vector<std::unique_ptr<CudnnConv>> convs;
  std::vector<std::unique_ptr<CudnnPool>> pools;
  std::vector<std::unique_ptr<CudnnBatchNorm>> batchnorms;
  std::vector<std::unique_ptr<CublasLtMatmul>> matmuls;
  std::vector<std::function<void()>> launches;  // one per plan launch (views: empty)
  std::vector<cudaEvent_t> events;              // 2 per launch + begin/end

  ~Impl() {
    for (auto e : events) cudaEventDestroy(e);
    convs.clear();
    pools.clear();
    batchnorms.clear();
    matmuls.clear();
    if (lt) cublasLtDestroy(lt);
    if (cudnn) cudnnDestroy(cudnn);
    if (stream) cudaStreamDestroy(stream);
  }
};

CudaExecutor::CudaExecutor(const Graph& graph, LaunchPlan plan, const CudaDeviceInfo& device,
                           const std::string& stem)
    : graph_(graph),
      plan_(std::move(plan)),
      memory_(DeviceMemoryPlan::build(graph_, plan_)),
      device_(device),
      impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  check_cuda(cudaSetDevice(device_.index), "selecting " + device_.label());
  check_cuda(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "creating a stream");
  check_cudnn(cudnnCreate(&m.cudnn), "creating a handle");
  check_cudnn(cudnnSetStream(m.cudnn, m.stream), "setting the stream");
  check_cublas(cublasLtCreate(&m.lt), "creating a handle");
  m.weights = std::make_unique<DeviceAllocation>(memory_.weight_bytes, "the constants");
  m.inputs = std::make_unique<DeviceAllocation>(memory_.input_bytes, "the inputs");
  m.arena = std::make_unique<DeviceAllocation>(memory_.arena_bytes, "the activation arena");
  spdlog::info("cuda: {} launches, arena {} bytes, constants {} bytes", plan_.launches.size(),
               memory_.arena_bytes, memory_.weight_bytes);

  auto ptr = [&](ValueId v) -> void* {
    const DeviceBuffer& b = memory_.buffer(v);
    char* base = nullptr;
    switch (b.region) {
      case Region::Weights: base = static_cast<char*>(m.weights->ptr); break;
      case Region::Inputs: base = static_cast<char*>(m.inputs->ptr); break;
      case Region::Arena: base = static_cast<char*>(m.arena->ptr); break;
      case Region::None:
        throw Error("CUDA: value '" + graph_.value(v).name + "' has no device memory");
    }
    return base + b.offset;
  };
  // Constants, once.
  for (std::size_t v = 0; v < graph_.value_count(); ++v) {
    const auto id = static_cast<ValueId>(v);
    const DeviceBuffer& b = memory_.buffer(id);
    if (b.region != Region::Weights) continue;
    auto td = constant_data(graph_, id);
    if (!td) continue;  // a view of a constant: its root is uploaded
    const Tensor t = Tensor::from_data(td);
    if (static_cast<int64_t>(t.byte_size()) != b.bytes)
      throw Error("CUDA: constant '" + graph_.value(id).name + "' has " +
                  std::to_string(t.byte_size()) + " bytes, its shape says " +
                  std::to_string(b.bytes));
    check_cuda(cudaMemcpy(ptr(id), t.raw(), t.byte_size(), cudaMemcpyHostToDevice),
               "uploading '" + graph_.value(id).name + "'");
  }

  // Generated kernels and data movement: one library for the plan.
  const bool needs_lib = !plan_.generated.empty() || plan_.count(LaunchKind::Copy) > 0 ||
                         plan_.count(LaunchKind::Gather) > 0 ||
                         plan_.count(LaunchKind::Compare) > 0;
  if (needs_lib)
    m.lib = build_cuda_library(launch_plan_cuda_source(plan_), stem + "-cuda", device_.arch());

  // Search workspaces: as much as a large convolution may want, within free memory.
  std::size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "querying free memory");
  const std::size_t search_bytes = std::min<std::size_t>(std::size_t{1} << 30, free_bytes / 4);
  std::unique_ptr<DeviceAllocation> search;
  if (plan_.count(LaunchKind::Conv) > 0)
    search = std::make_unique<DeviceAllocation>(static_cast<int64_t>(search_bytes),
                                                "the cuDNN search workspace");
  int64_t max_channels = 0;
  std::size_t workspace_bytes = kMatmulWorkspace;
  for (const Launch& l : plan_.launches) {
    if (l.kind != LaunchKind::Conv) continue;
    const Node& n = graph_.node(l.anchor);
    const ConvParams p = conv_params(graph_, l.anchor);
    max_channels = std::max(max_channels, p.k);
    m.convs.push_back(std::make_unique<CudnnConv>(
        m.cudnn, p, p.has_bias || l.epilogue.bias != kNoValue, l.epilogue.residual != kNoValue,
        l.epilogue.relu, ptr(n.inputs[0]), ptr(n.inputs[1]), ptr(l.outputs.at(0)),
        search ? search->ptr : nullptr, search_bytes));
    workspace_bytes = std::max(workspace_bytes, m.convs.back()->workspace_bytes());
  }
  search.reset();
  m.workspace =
      std::make_unique<DeviceAllocation>(static_cast<int64_t>(workspace_bytes), "the workspace");
  m.zeros =
      std::make_unique<DeviceAllocation>(std::max<int64_t>(max_channels, 1) * 4, "a zero bias");
  check_cuda(
      cudaMemset(m.zeros->ptr, 0, static_cast<std::size_t>(std::max<int64_t>(max_channels, 1) * 4)),
      "clearing the zero bias");

  std::size_t conv_i = 0;
  for (const Launch& l : plan_.launches) {
    const std::string where = std::string(launch_kind_name(l.kind)) + " launch '" + l.name + "'";
    switch (l.kind) {
      case LaunchKind::View: m.launches.emplace_back(); break;
      case LaunchKind::Conv: {
        const Node& n = graph_.node(l.anchor);
        const CudnnConv* c = m.convs[conv_i++].get();
        void *x = ptr(n.inputs[0]), *w = ptr(n.inputs[1]), *y = ptr(l.outputs.at(0));
        const void* bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue ? ptr(n.inputs[2])
                           : l.epilogue.bias != kNoValue                  ? ptr(l.epilogue.bias)
                           : l.epilogue.relu                              ? m.zeros->ptr
                                                                          : nullptr;
        const void* res = l.epilogue.residual != kNoValue ? ptr(l.epilogue.residual) : nullptr;
        void* ws = m.workspace->ptr;
        m.launches.emplace_back([=] { c->run(x, w, bias, res, y, ws); });
        break;
      }
      case LaunchKind::Pool: {
        m.pools.push_back(std::make_unique<CudnnPool>(m.cudnn, pool_params(graph_, l.anchor)));
        const CudnnPool* p = m.pools.back().get();
        void *x = ptr(l.inputs.at(0)), *y = ptr(l.outputs.at(0));
        m.launches.emplace_back([=] { p->run(x, y); });
        break;
      }
      case LaunchKind::BatchNorm: {
        m.batchnorms.push_back(
            std::make_unique<CudnnBatchNorm>(m.cudnn, batchnorm_params(graph_, l.anchor)));
        const CudnnBatchNorm* bn = m.batchnorms.back().get();
        const Node& n = graph_.node(l.anchor);
        const void *x = ptr(n.inputs[0]), *s = ptr(n.inputs[1]), *b = ptr(n.inputs[2]),
                   *mean = ptr(n.inputs[3]), *var = ptr(n.inputs[4]);
        void* y = ptr(l.outputs.at(0));
        m.launches.emplace_back([=] { bn->run(x, s, b, mean, var, y); });
        break;
      }
      case LaunchKind::Matmul: {
        const Node& n = graph_.node(l.anchor);
        const MatmulParams mp = matmul_params(graph_, l.anchor);
        const ValueId bias_v = mp.bias != kNoValue ? mp.bias : l.epilogue.bias;
        m.matmuls.push_back(std::make_unique<CublasLtMatmul>(m.lt, mp, bias_v != kNoValue,
                                                             l.epilogue.relu, kMatmulWorkspace));
        const CublasLtMatmul* mm = m.matmuls.back().get();
        void *a = ptr(n.inputs[0]), *b = ptr(n.inputs[1]), *c = ptr(l.outputs.at(0));
        const void* bias = bias_v != kNoValue ? ptr(bias_v) : nullptr;
        void* ws = m.workspace->ptr;
        cudaStream_t st = m.stream;
        m.launches.emplace_back([=] { mm->run(a, b, bias, c, ws, st); });
        break;
      }
      case LaunchKind::Generated: {
        const LoweredGroup& lg = plan_.generated.at(static_cast<std::size_t>(l.generated));
        auto fn = m.lib->symbol<GeneratedFn>(lg.entry + "_cuda");
        std::vector<const float*> in;
        std::vector<float*> out;
        for (ValueId v : l.inputs) in.push_back(static_cast<const float*>(ptr(v)));
        for (ValueId v : l.outputs) out.push_back(static_cast<float*>(ptr(v)));
        std::vector<int64_t> dims = generated_dims(graph_, lg);
        cudaStream_t st = m.stream;
        m.launches.emplace_back(
            [=] { check_cuda(fn(in.data(), out.data(), dims.data(), st), where); });
        break;
      }
      case LaunchKind::Copy: {
        auto fn = m.lib->symbol<CopyFn>("fx_strided_copy");
        struct Bound {
          StridedCopy c;
          const void* src;
          void* dst;
        };
        std::vector<Bound> copies;
        for (auto& c : copy_plan(graph_, l.anchor)) copies.push_back({c, ptr(c.src), ptr(c.dst)});
        cudaStream_t st = m.stream;
        m.launches.emplace_back([=] {
          for (const auto& b : copies)
            check_cuda(fn(b.src, b.dst, static_cast<int>(b.c.dims.size()), b.c.dims.data(),
                          b.c.src_strides.data(), b.c.dst_strides.data(), b.c.src_offset,
                          b.c.dst_offset, b.c.elem_bytes, st),
                       where);
        });
        break;
      }
      case LaunchKind::Compare: {
        auto fn = m.lib->symbol<CompareFn>("fx_compare");
        const CompareOp c = compare_plan(graph_, l.anchor);
        const void *a = ptr(c.a), *b = ptr(c.b);
        void* out = ptr(c.out);
        cudaStream_t st = m.stream;
        m.launches.emplace_back([=] {
          check_cuda(
              fn(a, b, out, static_cast<int>(c.dims.size()), c.dims.data(), c.a_strides.data(),
                 c.b_strides.data(), static_cast<int>(c.kind), c.type, st),
              where);
        });
        break;
      }
      case LaunchKind::Gather: {
        auto fn = m.lib->symbol<GatherFn>("fx_gather");
        const GatherCopy gc = gather_plan(graph_, l.anchor);
        const void *data = ptr(gc.data), *idx = ptr(gc.indices);
        void* out = ptr(gc.out);
        cudaStream_t st = m.stream;
        m.launches.emplace_back([=] {
          check_cuda(fn(data, idx, out, gc.outer, gc.axis_len, gc.count, gc.inner, gc.elem_bytes,
                        gc.indices64 ? 1 : 0, st),
                     where);
        });
        break;
      }
    }
  }
  m.events.resize(plan_.launches.size() * 2 + 2);
  for (auto& e : m.events) check_cuda(cudaEventCreate(&e), "creating an event");
  check_cuda(cudaDeviceSynchronize(), "setting up the plan");
}

CudaExecutor::~CudaExecutor() = default;

namespace {

void upload_inputs(const Graph& g, const DeviceMemoryPlan& mem, void* base,
                   const std::map<std::string, Tensor>& inputs, cudaStream_t stream) {
  for (ValueId v : g.inputs()) {
    const DeviceBuffer& b = mem.buffer(v);
    if (b.region != Region::Inputs) continue;
    const std::string& name = g.value(v).name;
    auto it = inputs.find(name);
    if (it == inputs.end()) throw Error("CUDA: no data for input '" + name + "'");
    if (static_cast<int64_t>(it->second.byte_size()) != b.bytes ||
        it->second.dtype() != g.value(v).dtype)
      throw Error("CUDA: input '" + name + "' is " + it->second.str() + ", the plan was made for " +
                  g.value(v).shape.str());
    check_cuda(cudaMemcpyAsync(static_cast<char*>(base) + b.offset, it->second.raw(),
                               it->second.byte_size(), cudaMemcpyHostToDevice, stream),
               "uploading input '" + name + "'");
  }
}

}  // namespace

std::vector<Tensor> CudaExecutor::run(const std::map<std::string, Tensor>& inputs) {
  Impl& m = *impl_;
  check_cuda(cudaSetDevice(device_.index), "selecting the device");
  upload_inputs(graph_, memory_, m.inputs ? m.inputs->ptr : nullptr, inputs, m.stream);
  for (auto& l : m.launches)
    if (l) l();
  std::vector<Tensor> out;
  for (ValueId v : graph_.outputs()) {
    const Value& val = graph_.value(v);
    Tensor t(val.dtype, val.shape.static_dims());
    const DeviceBuffer& b = memory_.buffer(v);
    char* base = b.region == Region::Arena     ? static_cast<char*>(m.arena->ptr)
                 : b.region == Region::Inputs  ? static_cast<char*>(m.inputs->ptr)
                 : b.region == Region::Weights ? static_cast<char*>(m.weights->ptr)
                                               : nullptr;
    if (!base) throw Error("CUDA: output '" + val.name + "' has no device memory");
    check_cuda(
        cudaMemcpyAsync(t.raw(), base + b.offset, t.byte_size(), cudaMemcpyDeviceToHost, m.stream),
        "downloading output '" + val.name + "'");
    out.push_back(std::move(t));
  }
  check_cuda(cudaStreamSynchronize(m.stream), "running the plan");
  return out;
}

GpuRunTimes CudaExecutor::timed_run(const std::map<std::string, Tensor>& inputs) {
  Impl& m = *impl_;
  check_cuda(cudaSetDevice(device_.index), "selecting the device");
  upload_inputs(graph_, memory_, m.inputs ? m.inputs->ptr : nullptr, inputs, m.stream);
  const std::size_t n = m.launches.size();
  cudaEvent_t begin = m.events[2 * n], end = m.events[2 * n + 1];
  check_cuda(cudaEventRecord(begin, m.stream), "recording an event");
  for (std::size_t i = 0; i < n; ++i) {
    check_cuda(cudaEventRecord(m.events[2 * i], m.stream), "recording an event");
    if (m.launches[i]) m.launches[i]();
    check_cuda(cudaEventRecord(m.events[2 * i + 1], m.stream), "recording an event");
  }
  check_cuda(cudaEventRecord(end, m.stream), "recording an event");
  check_cuda(cudaEventSynchronize(end), "running the plan");
  GpuRunTimes t;
  t.start_us.resize(n);
  t.duration_us.resize(n);
  float ms = 0;
  for (std::size_t i = 0; i < n; ++i) {
    check_cuda(cudaEventElapsedTime(&ms, begin, m.events[2 * i]), "reading an event");
    t.start_us[i] = ms * 1e3;
    check_cuda(cudaEventElapsedTime(&ms, m.events[2 * i], m.events[2 * i + 1]), "reading an event");
    t.duration_us[i] = ms * 1e3;
  }
  check_cuda(cudaEventElapsedTime(&ms, begin, end), "reading an event");
  t.wall_ms = ms;
  return t;
}

}  // namespace fx::cuda
