// SPDX-License-Identifier: Apache-2.0
#include "cuda_device_cli.h"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "device/device_presets.h"
#include "util/error.h"

#ifdef FX_HAVE_CUDA_RUNTIME
#include "cuda_plan/gpu_calibration_fit.h"
#include "cuda_runtime/cuda_calibration.h"
#include "cuda_runtime/cuda_device.h"
#include "cuda_runtime/cuda_profile.h"
#endif

namespace fxc {

namespace {

#ifdef FX_HAVE_CUDA_RUNTIME
fx::cuda::CudaProfileOptions cuda_options(const CudaRunOptions& o) {
  fx::cuda::CudaProfileOptions c;
  c.device = o.device.index;
  c.runs = o.profile.runs;
  c.warmup = o.profile.warmup;
  c.seed = o.profile.seed;
  c.opset = o.profile.opset;
  c.cpu_threads = o.profile.threads;
  c.stem = o.stem.empty() ? "model" : o.stem;
  c.tolerance = o.tolerance;
  return c;
}
#else
[[noreturn]] void no_cuda_build(const fx::cuda::DeviceSpec& d) {
  throw fx::Error("--device " + d.str() +
                  ": this fxc was built without the CUDA executor (configure with "
                  "-DFX_ENABLE_CUDA=ON where the CUDA toolkit, cuDNN and cuBLASLt are installed)");
}
#endif

}  // namespace

void require_cuda_device(const fx::cuda::DeviceSpec& device) {
#ifdef FX_HAVE_CUDA_RUNTIME
  fx::cuda::require_cuda_device(device.index);
#else
  no_cuda_build(device);
#endif
}

fx::ProfileResult profile_on_cuda(const fx::Graph& graph, const CudaRunOptions& o) {
#ifdef FX_HAVE_CUDA_RUNTIME
  return fx::cuda::cuda_profile(graph, cuda_options(o));
#else
  (void)graph;
  no_cuda_build(o.device);
#endif
}

fx::BeforeAfterResult before_after_on_cuda(const fx::Graph& graph,
                                           const std::vector<const fx::FusionGroup*>& groups,
                                           const CudaRunOptions& o) {
#ifdef FX_HAVE_CUDA_RUNTIME
  return fx::cuda::cuda_before_after(graph, groups, cuda_options(o));
#else
  (void)graph, (void)groups;
  no_cuda_build(o.device);
#endif
}

int calibrate_cuda(const fx::cuda::DeviceSpec& device, const std::string& out, int runs,
                   bool json) {
#ifdef FX_HAVE_CUDA_RUNTIME
  fx::cuda::GpuCalibrationOptions go;
  go.device = device.index;
  go.runs = runs;
  go.progress = [](const std::string& s) { fmt::print(stderr, "fxc calibrate: {}\n", s); };
  const fx::cuda::GpuMeasurements m = fx::cuda::measure_gpu(go);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const std::string name = fx::cuda::gpu_profile_name(m.device_name);
  const fx::DeviceProfile p = fx::cuda::gpu_profile_from_measurements(m, name, date);
  const std::string path = out.empty() ? fx::device_cache_dir() + "/" + name + ".json" : out;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  fx::save_device_profile(p, path);
  if (json) {
    nlohmann::json j = fx::to_json(p);
    j["written_to"] = path;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("Device       {} ({})\n", m.device_name, m.driver);
  fmt::print("Copy         {:.1f} GB/s (read + write)\n", m.copy_bytes_per_s / 1e9);
  fmt::print("Elementwise  {:.1f} GB/s   Softmax rows {:.1f} GB/s   Transpose {:.1f} GB/s\n",
             m.elementwise_bytes_per_s / 1e9, m.reduction_bytes_per_s / 1e9,
             m.transpose_bytes_per_s / 1e9);
  fmt::print("Launch       {:.2f} us per kernel, back to back\n", m.launch_overhead_s * 1e6);
  fmt::print("MatMul       {:.1f} TFLOP/s float32 (cuBLASLt)   Conv {:.1f} TFLOP/s (cuDNN)\n",
             m.matmul_flops_per_s / 1e12, m.conv_flops_per_s / 1e12);
  fmt::print("Profile      {} written to {} (--device {} uses it)\n", name, path, name);
  return 0;
#else
  (void)out, (void)runs, (void)json;
  no_cuda_build(device);
#endif
}

}  // namespace fxc
