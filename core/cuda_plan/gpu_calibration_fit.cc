// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/gpu_calibration_fit.h"

#include <cctype>

#include "util/error.h"

namespace fx::cuda {

namespace {

void need(double v, const char* what) {
  if (!(v > 0)) throw Error(std::string("GPU calibration: no measurement of ") + what);
}

void set_class(DeviceProfile& p, KernelClass c, double bytes_per_s, double flops_per_s) {
  auto& k = p.kernel_classes[static_cast<std::size_t>(c)];
  k.bandwidth_bytes_per_s = bytes_per_s;
  k.flops_per_s = flops_per_s;
}

}  // namespace

std::string gpu_profile_name(const std::string& device_name) {
  std::string lower;
  for (char c : device_name)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* known : {"h100", "h200", "a100", "l4", "l40"}) {
    const std::string k = known;
    const auto at = lower.find(k);
    if (at == std::string::npos) continue;
    const auto after = at + k.size();
    const bool word_end =
        after == lower.size() || !std::isalnum(static_cast<unsigned char>(lower[after]));
    if (word_end) return "nvidia-" + k;
  }
  std::string out = "cuda-";
  bool dash = false;
  for (char c : lower) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += c;
      dash = false;
    } else if (!dash && out.back() != '-') {
      out += '-';
      dash = true;
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

DeviceProfile gpu_profile_from_measurements(const GpuMeasurements& m, const std::string& name,
                                            const std::string& date) {
  need(m.copy_bytes_per_s, "copy bandwidth");
  need(m.launch_overhead_s, "launch overhead");
  need(m.matmul_flops_per_s, "matmul throughput");
  DeviceProfile p;
  p.name = name;
  p.description = m.device_name + " (" + std::to_string(m.sm_count) + " SMs), " + m.driver;
  p.source = "measured on " + m.device_name + " " + date + " (fxc calibrate --device cuda)";
  p.memory_bandwidth_bytes_per_s = m.copy_bytes_per_s;
  p.peak_flops = m.matmul_flops_per_s;
  p.launch_overhead_s = m.launch_overhead_s;
  p.onchip_capacity_bytes = m.shared_memory_per_sm;
  p.capacity_note = "shared memory per SM";
  p.l2_bytes = m.l2_bytes;
  set_class(p, KernelClass::Elementwise, m.elementwise_bytes_per_s, 0);
  set_class(p, KernelClass::Reduction, m.reduction_bytes_per_s, 0);
  set_class(p, KernelClass::Conv, 0, m.conv_flops_per_s);
  set_class(p, KernelClass::Depthwise, m.depthwise_bytes_per_s, 0);
  set_class(p, KernelClass::Pooling, m.depthwise_bytes_per_s, 0);  // windowed, like depthwise
  set_class(p, KernelClass::MatMul, 0, m.matmul_flops_per_s);
  set_class(p, KernelClass::DataMovement, m.transpose_bytes_per_s, 0);
  p.measured_ops = {"AveragePool", "Conv", "MatMul", "MaxPool", "Softmax", "Transpose"};
  p.check();
  return p;
}

}  // namespace fx::cuda
