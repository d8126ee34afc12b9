// SPDX-License-Identifier: Apache-2.0
#include "cuda_runtime/cuda_calibration.h"

#include <fmt/format.h>

#include "analysis/analysis_result.h"
#include "cuda_runtime/cuda_device.h"
#include "cuda_runtime/cuda_executor.h"
#include "ir/graph_builder.h"
#include "profile/random_inputs.h"

namespace fx::cuda {

namespace {

// Median kernel time of the graph's launch named `name`, in seconds, over `runs`.
double median_launch_s(const Graph& g, const LaunchPlan& plan, const CudaDeviceInfo& dev, int runs,
                       const std::string& name) {
  CudaExecutor e(g, plan, dev, "calibration");
  const auto inputs = random_inputs(g, 1);
  e.run(inputs);
  std::vector<GpuRunTimes> times;
  for (int i = 0; i < runs; ++i) times.push_back(e.timed_run(inputs));
  const ProfileResult r = gpu_profile_result(g, e.plan(), e.memory(), times, dev.label(), 1);
  for (const auto& k : r.kernels)
    if (k.name == name) return k.median_us * 1e-6;
  return 0;
}

std::shared_ptr<TensorData> filled(std::vector<int64_t> dims, float v) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return TensorData::from_floats(dims, std::vector<float>(static_cast<std::size_t>(n), v));
}

}  // namespace

GpuMeasurements measure_gpu(const GpuCalibrationOptions& o) {
  const CudaDeviceInfo dev = require_cuda_device(o.device);
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  GpuMeasurements m;
  m.device_name = dev.name;
  m.driver = fmt::format("driver {}, runtime {}", dev.driver_version, dev.runtime_version);
  m.sm_count = dev.sm_count;
  m.shared_memory_per_sm = dev.shared_memory_per_sm;
  m.l2_bytes = dev.l2_bytes;
  const int64_t row = 1024, rows = o.stream_mib * (1 << 20) / 4 / row;
  const double bytes = 2.0 * static_cast<double>(rows * row) * 4;  // read + write
  {
    say("copy and elementwise bandwidth");
    GraphBuilder b;
    auto x = b.input("x", {rows, row});
    auto t = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 1}}}, "copy",
                  Shape::of({rows, row}));
    auto y = b.op("Relu", {x}, {}, "relu", Shape::of({rows, row}));
    auto s = b.op("Softmax", {x}, {{"axis", int64_t{-1}}}, "softmax", Shape::of({rows, row}));
    b.output(t), b.output(y), b.output(s);
    Graph g = b.build();
    const LaunchPlan p = build_launch_plan(g, {});
    m.copy_bytes_per_s = bytes / median_launch_s(g, p, dev, o.runs, "copy");
    m.elementwise_bytes_per_s = bytes / median_launch_s(g, p, dev, o.runs, "relu");
    m.reduction_bytes_per_s = bytes / median_launch_s(g, p, dev, o.runs, "softmax");
  }
  {
    say("transpose");
    const int64_t side = 4096;
    GraphBuilder b;
    auto x = b.input("x", {side, side});
    b.output(b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}}, "t",
                  Shape::of({side, side})));
    Graph g = b.build();
    m.transpose_bytes_per_s =
        2.0 * side * side * 4 / median_launch_s(g, build_launch_plan(g, {}), dev, o.runs, "t");
  }
  {
    say("launch overhead");
    const int chain = 200;
    GraphBuilder b;
    ValueId v = b.input("x", {256});
    for (int i = 0; i < chain; ++i)
      v = b.op("Relu", {v}, {}, "r" + std::to_string(i), Shape::of({256}));
    b.output(v);
    Graph g = b.build();
    CudaExecutor e(g, build_launch_plan(g, {}), dev, "calibration");
    const auto inputs = random_inputs(g, 1);
    e.run(inputs);
    std::vector<double> per;
    for (int i = 0; i < o.runs; ++i) per.push_back(e.timed_run(inputs).wall_ms * 1e-3 / chain);
    m.launch_overhead_s = median(per);
  }
  {
    say("matmul (cuBLASLt, float32)");
    const int64_t n = 4096;
    GraphBuilder b;
    auto a = b.input("a", {n, n});
    auto w = b.constant("w", filled({n, n}, 0.001f));
    b.output(b.op("MatMul", {a, w}, {}, "mm", Shape::of({n, n})));
    Graph g = b.build();
    m.matmul_flops_per_s =
        2.0 * n * n * n / median_launch_s(g, build_launch_plan(g, {}), dev, o.runs, "mm");
  }
  {
    say("convolution (cuDNN, float32) and pooling");
    const int64_t N = 16, C = 128, H = 56;
    GraphBuilder b;
    auto x = b.input("x", {N, C, H, H});
    auto w = b.constant("w", filled({C, C, 3, 3}, 0.001f));
    b.output(b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv",
                  Shape::of({N, C, H, H})));
    b.output(b.op(
        "MaxPool", {x},
        {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
        "pool", Shape::of({N, C, H, H})));
    Graph g = b.build();
    const LaunchPlan p = build_launch_plan(g, {});
    m.conv_flops_per_s = 2.0 * N * C * H * H * C * 9 / median_launch_s(g, p, dev, o.runs, "conv");
    m.depthwise_bytes_per_s = 2.0 * N * C * H * H * 4 / median_launch_s(g, p, dev, o.runs, "pool");
  }
  return m;
}

}  // namespace fx::cuda
