// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the cost model needs to know about a device, and where the numbers came from.
// Profiles are plain JSON files a user can write; three presets are built in:
//
//   cpu-host      measured on this machine by calibration (calibration/cpu_calibration.h),
//                 cached under $XDG_CACHE_HOME/fusion-explorer (or ~/.cache/fusion-explorer)
//   nvidia-h100   vendor datasheet figures
//   ascend-910b   public figures, unverified
// (device_presets.h). This layer is data only: it never measures anything.
//
// JSON (every field but name optional on load):
//   { "schema_version": 1, "name": "nvidia-h100", "description": "...",
//     "source": "vendor datasheet", "memory_bandwidth_bytes_per_s": 3.0e12,
//     "peak_flops": 7.0e14, "launch_overhead_s": 5e-6, "onchip_capacity_bytes": 233472,
//     "l2_bytes": 52428800, "capacity_note": "shared memory per SM",
//     "isa": "avx512_core",                      // optional: measured profiles only
//     "kernel_classes": { "conv": { "bandwidth_bytes_per_s": 2.0e12, "flops_per_s": 4.0e14 },
//                         ... },                 // optional, per KernelClass (below)
//     "calibrated": false, "calibration": "" }  // optional: what the rates were fitted to
//
// Kernel classes: the cost model times each kernel as
//   launch_overhead + max(bytes / bandwidth(class), flops / flops(class))
// with effective rates per class of kernel (what a conv reaches is not what an elementwise
// loop reaches). A class without its own rates uses the profile's memory bandwidth and
// peak FLOP/s (the uncalibrated default); `fxc calibrate --from` fits them per class.
//
// Fused kernels (one kernel for several nodes: an anchor with its epilogue, a loop nest, a
// row kernel) are timed with the rates of their class scaled by a fitted factor, plus
// the bytes their epilogue moves at a fitted epilogue bandwidth:
//   launch_overhead + fixed(class)
//                   + scale(class) * max(bytes / bandwidth(class), flops / flops(class))
//                   + epilogue_bytes / epilogue_bandwidth(class)
// JSON: "fused_kernel_classes": { "conv": { "scale": 0.8,
//                                           "epilogue_bandwidth_bytes_per_s": 4e9 },
//                                 "elementwise": { "scale": 0.9, "fixed_s": 1e-6 }, ... }
// Defaults: scale 1, fixed 0 (profiles written before it), epilogue bandwidth = the
// elementwise class's bandwidth. With a working-set
// curve (below) the epilogue's bytes follow it as the elementwise class does.
//
// Saving model: "saving_model" (saving_coefficients.h), written by `fxc calibrate --from`:
// per fused-kernel class, coefficients that predict a group's time saved from the terms
// fusion changes. Analysis uses them for the classes that kept their fit; absent (older
// profiles, presets), every group's saving is the difference of its kernel times.
//
// Saving uncertainty: "saving_uncertainty" (written by `fxc calibrate`'s grid): per
// fused-kernel class, the robust RMS of (measured - predicted saving) / the group's
// predicted unfused time over the calibration's own groups, each predicted without its
// own measurement (without its whole model's, where the results come from several
// models), and the quantile of |residual| that held `coverage` of them: the interval's
// half width. Analysis turns it into each estimate's interval (analysis/
// estimate_interval.h). Absent: the interval is unknown.
//   "saving_uncertainty": { "conv": { "groups": 14, "rel_rms": 0.08,
//                                     "rel_half_width": 0.12, "coverage": 0.9 }, ... }
// Lone kernels: "lone_kernel_saving" (written by `fxc calibrate --from`): per kernel class,
// the share of an unfused kernel's time that a program with fused groups saves on the
// kernels it leaves alone (the fused program keeps activations in the layout its convs
// want, runs pooling with generated loops, ...), measured on the kernels outside every
// group of the results fitted, the median over their models (calibration/
// lone_kernel_fit.h; "results" counts those models). Absent: 0 (a plan changes only the
// groups it fuses). "kinds" (optional) says it per kind of lone kernel where the class is
// too coarse (analysis/lone_kernels.h decides the kind from the graph): what a spatial 2-D
// conv that the layout plan keeps in an NHWC chain saves per MB of the relayout it no
// longer does ("spatial_conv_us_per_mb"), the share of its time another 2-D conv in such a
// chain saves (1x1 or grouped: "other_conv"), and what a zero Pad and the AveragePool
// that reads it save when the fused program folds the Pad into the pool ("merged"), per
// us of their time apart as the cost model predicts it (it may exceed 1: the runtime's
// Pad is slower than its bytes say).
// Each is the median over the models measured with such kernels; absent (older
// profiles) or null: the class's share stands in.
//   "lone_kernel_saving": { "results": 60, "classes": { "conv": 0.09, ... },
//                           "kinds": { "spatial_conv_us_per_mb": 100, "other_conv": 0.1,
//                                      "merged": 0.9 } }
// "measured_ops": the op types calibration timed (a model's other ops are estimated
// with rates never measured on them); "calibration_flags": what the sanity checks found
// wrong with a calibration saved anyway (`fxc calibrate --force`); "cpu_model" and
// "fxc_version": the machine and build a measured profile belongs to (a cached profile of
// another CPU or version is measured again).
//
// Winograd: "winograd" (winograd_support.h), which convolutions the device's runtime runs
// with Winograd, as calibration asked the runtime.
//
// Working set: "bandwidth_curve" (written by `fxc calibrate`'s grid): the copy bandwidth
// at working sets across the cache hierarchy (bytes read + written, from half of L1 to
// twice L3, as machine facts gave them), and per class how closely its kernels follow it
// (an exponent fitted with the class rates: 0 ignores the curve, 1 follows it). A class's
// bandwidth is its rate beyond the caches; a kernel touching B bytes gets
//   bandwidth(class) x (curve(B) / curve(largest point)) ^ follow(class)
// with the curve interpolated in log-log and held flat beyond its ends. Absent: one
// bandwidth per class whatever the working set.
//   "bandwidth_curve": { "points": [[49152, 2.7e11], ..., [134217728, 9.6e9]],
//                        "follow": { "elementwise": 0.9, ... } }

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "device/kernel_class.h"
#include "device/saving_coefficients.h"
#include "device/winograd_support.h"

namespace fx {

struct KernelClassRates {
  double bandwidth_bytes_per_s = 0;  // 0: the profile's memory_bandwidth_bytes_per_s
  double flops_per_s = 0;            // 0: the profile's peak_flops
};

// A fused kernel of one class: see the formula above. Zeros mean the defaults.
struct FusedClassRates {
  double scale = 0;                           // 0: 1 (a fused kernel runs like its class)
  double epilogue_bandwidth_bytes_per_s = 0;  // 0: bandwidth(Elementwise)
  // Seconds a fused kernel of the class takes beyond its launch whatever its size: a
  // generated loop nest or row kernel sets up its loops, broadcasts and row buffers on
  // every call, which no rate that scales with bytes or FLOPs carries and which decides
  // the kernels of a few hundred bytes (a squeeze-excitation's Sigmoid -> Mul). 0: none.
  double fixed_s = 0;
};

// How far a class's saving predictions were from measured savings in calibration.
struct SavingUncertainty {
  int groups = 0;      // calibration groups the figure comes from (0: unknown)
  double rel_rms = 0;  // robust RMS residual / predicted unfused time of the group
  // |residual| / predicted unfused time that `coverage` of the residuals stayed within:
  // the interval's half width (0: older profiles, 2 x rel_rms stands in).
  double rel_half_width = 0;
  double coverage = 0;
};

// See "lone_kernel_saving" above.
struct LoneKernelSaving {
  int results = 0;  // models (results with fused groups) the shares are medians over; 0: none
  std::array<double, kKernelClassCount> share{};  // per KernelClass, of the unfused time
  // "kinds"; NaN: not fitted (the class's share stands in).
  double spatial_conv_s_per_byte = std::numeric_limits<double>::quiet_NaN();
  double other_conv_share = std::numeric_limits<double>::quiet_NaN();
  double merged_share = std::numeric_limits<double>::quiet_NaN();  // per predicted us
  // True when the kinds of 2-D convs were fitted (analysis then credits a conv by its kind).
  bool has_conv_kinds() const {
    return std::isfinite(spatial_conv_s_per_byte) && std::isfinite(other_conv_share);
  }
};

// The copy bandwidth against the bytes a kernel touches (see the formula above).
struct BandwidthCurve {
  std::vector<std::pair<double, double>> points;  // (bytes touched, bytes/s), ascending
  std::array<double, kKernelClassCount> follow = {1, 1, 1, 1, 1, 1, 1};
  bool empty() const { return points.size() < 2; }
  // log(curve(bytes) / curve(largest point)): 0 without a curve.
  double log_gain(double bytes) const;
};

struct DeviceProfile {
  std::string name;
  std::string description;
  // Where the numbers come from: "measured on this host 2026-11-23", "vendor datasheet",
  // "public figures, unverified". Printed beside every estimate.
  std::string source;
  double memory_bandwidth_bytes_per_s = 0;  // sustained DRAM/HBM copy bandwidth
  double peak_flops = 0;                    // dense FLOP/s of the type the model runs in
  double launch_overhead_s = 0;             // per kernel launch / task dispatch
  // The on-chip memory a fused kernel keeps its tile in (GPU shared memory per SM, CPU
  // L2 per core, Ascend UB per AI core). Fusions need footprint <= 0.8 x this.
  int64_t onchip_capacity_bytes = 0;
  int64_t l2_bytes = 0;       // last-level cache shared by cores (informative)
  std::string capacity_note;  // what onchip_capacity_bytes stands for on this device
  // The instruction set the runtime's kernels use here ("avx512_core"), as calibration
  // found it; empty: not measured (presets, older profiles). Informative.
  std::string isa;
  // How much faster the runtime's int8 matrix product (u8 x s8 -> s32, oneDNN as the
  // runtime calls it) runs than its float32 one of the same size, measured back to back
  // on this machine (VNNI/AMX show here); 0: not measured (presets, older profiles), and
  // int8 groups are then estimated at the float rate.
  double int8_speedup = 0;
  // Effective rates per KernelClass; zeros fall back to the two figures above.
  std::array<KernelClassRates, kKernelClassCount> kernel_classes{};
  // How fused kernels of each class differ from the class's own kernels.
  std::array<FusedClassRates, kKernelClassCount> fused_classes{};
  bool calibrated = false;  // rates fitted to measured kernel times (fxc calibrate --from)
  std::string calibration;  // what they were fitted to, when calibrated
  // Coefficients predicting group savings, fitted to measured savings on these rates.
  SavingCoefficients saving_model;
  // Which convolutions the runtime runs with Winograd (none recorded: none).
  WinogradSupport winograd;
  // Per fused-kernel class; groups == 0: no residuals (presets, quick measurement).
  std::array<SavingUncertainty, kKernelClassCount> saving_uncertainty{};
  LoneKernelSaving lone_kernel_saving;
  std::vector<std::string> measured_ops;       // op types calibration timed (sorted)
  std::vector<std::string> calibration_flags;  // sanity-check findings saved anyway
  BandwidthCurve bandwidth_curve;              // none: one bandwidth per class
  std::string cpu_model;                       // measured profiles: /proc/cpuinfo's model name
  std::string fxc_version;                     // and the fxc that measured it

  const SavingUncertainty& uncertainty(KernelClass c) const {
    return saving_uncertainty[static_cast<std::size_t>(c)];
  }
  // The share of a lone kernel of class `c`'s time a plan with fused groups saves.
  double lone_saving_share(KernelClass c) const {
    return lone_kernel_saving.share[static_cast<std::size_t>(c)];
  }
  bool has_uncertainty() const {
    for (const auto& u : saving_uncertainty)
      if (u.groups > 0) return true;
    return false;
  }
  // A profile of published figures, never measured (its source says "datasheet" or
  // "unverified", and nothing was fitted): its estimates are datasheet estimates.
  bool datasheet() const {
    return !calibrated && cpu_model.empty() &&
           (source.find("datasheet") != std::string::npos ||
            source.find("unverified") != std::string::npos);
  }

  double bandwidth(KernelClass c) const {
    double v = kernel_classes[static_cast<std::size_t>(c)].bandwidth_bytes_per_s;
    return v > 0 ? v : memory_bandwidth_bytes_per_s;
  }
  double flops(KernelClass c) const {
    double v = kernel_classes[static_cast<std::size_t>(c)].flops_per_s;
    return v > 0 ? v : peak_flops;
  }
  // The class's bandwidth for a kernel that touches `bytes` (read + written).
  double bandwidth(KernelClass c, double bytes) const {
    return bandwidth(c) * cache_gain(c, bytes);
  }
  double fused_scale(KernelClass c) const {
    double v = fused_classes[static_cast<std::size_t>(c)].scale;
    return v > 0 ? v : 1.0;
  }
  double fused_fixed_s(KernelClass c) const {
    return fused_classes[static_cast<std::size_t>(c)].fixed_s;
  }
  double epilogue_bandwidth(KernelClass c) const {
    double v = fused_classes[static_cast<std::size_t>(c)].epilogue_bandwidth_bytes_per_s;
    return v > 0 ? v : bandwidth(KernelClass::Elementwise);
  }
  // An epilogue moving `bytes` (its output, a residual): on the working-set curve as the
  // elementwise loops it replaces, so that both sides of a saving sit at the same level.
  double epilogue_bandwidth(KernelClass c, double bytes) const {
    return epilogue_bandwidth(c) * cache_gain(KernelClass::Elementwise, bytes);
  }
  // bandwidth(c, bytes) / bandwidth(c): 1 without a curve.
  double cache_gain(KernelClass c, double bytes) const {
    const double g = bandwidth_curve.log_gain(bytes);
    return g == 0 ? 1.0 : std::exp(bandwidth_curve.follow[static_cast<std::size_t>(c)] * g);
  }
  // "cpu-host" or "cpu-host (calibrated)": names the model behind an estimate.
  std::string label() const { return calibrated ? name + " (calibrated)" : name; }

  // Throws fx::Error when a number is missing, negative or zero where it must not be.
  void check() const;
};

nlohmann::json to_json(const DeviceProfile& p);
// Throws fx::Error naming the missing/invalid field.
DeviceProfile device_profile_from_json(const nlohmann::json& j);
// Throws fx::FileError naming the path.
DeviceProfile load_device_profile(const std::string& path);
void save_device_profile(const DeviceProfile& p, const std::string& path);

}  // namespace fx
