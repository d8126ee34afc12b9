// SPDX-License-Identifier: Apache-2.0
#include "device/device_profile.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/json_file.h"

namespace fx {

double BandwidthCurve::log_gain(double bytes) const {
  if (empty() || !(bytes > 0)) return 0;
  const double ref = std::log(points.back().second);
  const double x = std::log(bytes);
  if (x <= std::log(points.front().first)) return std::log(points.front().second) - ref;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const double x0 = std::log(points[i - 1].first), x1 = std::log(points[i].first);
    if (x > x1) continue;
    const double t = x1 > x0 ? (x - x0) / (x1 - x0) : 1.0;
    const double y0 = std::log(points[i - 1].second), y1 = std::log(points[i].second);
    return y0 + t * (y1 - y0) - ref;
  }
  return 0;  // beyond the largest point: the rate there
}

void DeviceProfile::check() const {
  auto bad = [&](const char* field) {
    throw Error("device profile '" + name + "': " + field + " must be a positive number");
  };
  if (name.empty()) throw Error("device profile without a name");
  if (!(memory_bandwidth_bytes_per_s > 0)) bad("memory_bandwidth_bytes_per_s");
  if (!(peak_flops > 0)) bad("peak_flops");
  if (!(launch_overhead_s >= 0)) bad("launch_overhead_s");
  if (onchip_capacity_bytes <= 0) bad("onchip_capacity_bytes");
  for (const auto& r : kernel_classes)
    if (!(r.bandwidth_bytes_per_s >= 0) || !(r.flops_per_s >= 0) ||
        !std::isfinite(r.bandwidth_bytes_per_s) || !std::isfinite(r.flops_per_s))
      bad("kernel_classes rates");
  for (const auto& r : fused_classes)
    if (!(r.scale >= 0) || !(r.epilogue_bandwidth_bytes_per_s >= 0) || !std::isfinite(r.scale) ||
        !std::isfinite(r.epilogue_bandwidth_bytes_per_s) || !(r.fixed_s >= 0) ||
        !std::isfinite(r.fixed_s))
      bad("fused_kernel_classes rates");
  for (const auto& u : saving_uncertainty)
    if (u.groups < 0 || !(u.rel_rms >= 0) || !std::isfinite(u.rel_rms) ||
        !(u.rel_half_width >= 0) || !std::isfinite(u.rel_half_width) || !(u.coverage >= 0) ||
        !(u.coverage < 1))
      throw Error(
          "device profile '" + name +
          "': saving_uncertainty must have groups >= 0, finite rel_rms and rel_half_width >= 0 "
          "and a coverage in [0, 1)");
  for (double v : lone_kernel_saving.share)
    if (!std::isfinite(v) || v >= 1)
      throw Error("device profile '" + name +
                  "': lone_kernel_saving shares must be finite and < 1");
  {
    const LoneKernelSaving& l = lone_kernel_saving;
    const auto bad = [](double v, double hi) { return !std::isnan(v) && !(v >= 0 && v < hi); };
    if (bad(l.spatial_conv_s_per_byte, 1) || bad(l.other_conv_share, 1) || bad(l.merged_share, 100))
      throw Error("device profile '" + name +
                  "': lone_kernel_saving kinds must be >= 0, other_conv < 1, merged < 100 and "
                  "the rate finite");
  }
  for (std::size_t i = 0; i < bandwidth_curve.points.size(); ++i) {
    const auto& [b, v] = bandwidth_curve.points[i];
    if (!(b > 0) || !(v > 0) || !std::isfinite(b) || !std::isfinite(v) ||
        (i > 0 && !(b > bandwidth_curve.points[i - 1].first)))
      throw Error("device profile '" + name +
                  "': bandwidth_curve points must be positive [bytes, bytes/s] pairs in "
                  "ascending bytes");
  }
  for (double f : bandwidth_curve.follow)
    if (!std::isfinite(f) || f < 0 || f > 4)
      throw Error("device profile '" + name + "': bandwidth_curve follow must be in [0, 4]");
  for (const auto& c : saving_model.classes)
    for (double v : c.coefficients)
      if (!std::isfinite(v))
        throw Error("device profile '" + name + "': saving_model coefficients must be finite");
}

nlohmann::json to_json(const DeviceProfile& p) {
  nlohmann::json classes = nlohmann::json::object();
  for (int i = 0; i < kKernelClassCount; ++i) {
    const KernelClassRates& r = p.kernel_classes[static_cast<std::size_t>(i)];
    // Pooling beside depthwise even when unset: without it, the profile reads back as
    // one written before the pooling class (pooling_from_depthwise).
    const bool beside_depthwise =
        KernelClass(i) == KernelClass::Pooling &&
        (p.kernel_classes[std::size_t(KernelClass::Depthwise)].bandwidth_bytes_per_s > 0 ||
         p.kernel_classes[std::size_t(KernelClass::Depthwise)].flops_per_s > 0);
    if (r.bandwidth_bytes_per_s > 0 || r.flops_per_s > 0 || beside_depthwise)
      classes[kernel_class_name(static_cast<KernelClass>(i))] = {
          {"bandwidth_bytes_per_s", r.bandwidth_bytes_per_s}, {"flops_per_s", r.flops_per_s}};
  }
  nlohmann::json fused = nlohmann::json::object();
  for (int i = 0; i < kKernelClassCount; ++i) {
    const FusedClassRates& r = p.fused_classes[static_cast<std::size_t>(i)];
    if (!(r.scale > 0 || r.epilogue_bandwidth_bytes_per_s > 0 || r.fixed_s > 0)) continue;
    nlohmann::json& f = fused[kernel_class_name(static_cast<KernelClass>(i))];
    f = {{"scale", r.scale}, {"epilogue_bandwidth_bytes_per_s", r.epilogue_bandwidth_bytes_per_s}};
    if (r.fixed_s > 0) f["fixed_s"] = r.fixed_s;
  }
  nlohmann::json j = {{"schema_version", 1},
                      {"name", p.name},
                      {"description", p.description},
                      {"source", p.source},
                      {"memory_bandwidth_bytes_per_s", p.memory_bandwidth_bytes_per_s},
                      {"peak_flops", p.peak_flops},
                      {"launch_overhead_s", p.launch_overhead_s},
                      {"onchip_capacity_bytes", p.onchip_capacity_bytes},
                      {"l2_bytes", p.l2_bytes},
                      {"capacity_note", p.capacity_note},
                      {"kernel_classes", classes},
                      {"fused_kernel_classes", fused},
                      {"calibrated", p.calibrated},
                      {"calibration", p.calibration}};
  if (p.saving_model.groups > 0 || p.saving_model.any_fitted())
    j["saving_model"] = to_json(p.saving_model);
  if (!p.isa.empty()) j["isa"] = p.isa;
  if (p.int8_speedup > 0) j["int8_speedup"] = p.int8_speedup;
  if (p.has_uncertainty()) {
    nlohmann::json u = nlohmann::json::object();
    for (int i = 0; i < kKernelClassCount; ++i) {
      const SavingUncertainty& s = p.saving_uncertainty[static_cast<std::size_t>(i)];
      if (s.groups > 0) {
        nlohmann::json& e = u[kernel_class_name(static_cast<KernelClass>(i))];
        e = {{"groups", s.groups}, {"rel_rms", s.rel_rms}};
        if (s.rel_half_width > 0)
          e["rel_half_width"] = s.rel_half_width, e["coverage"] = s.coverage;
      }
    }
    j["saving_uncertainty"] = u;
  }
  if (p.lone_kernel_saving.results > 0) {
    nlohmann::json c = nlohmann::json::object();
    for (int i = 0; i < kKernelClassCount; ++i)
      c[kernel_class_name(static_cast<KernelClass>(i))] =
          p.lone_kernel_saving.share[static_cast<std::size_t>(i)];
    j["lone_kernel_saving"] = {{"results", p.lone_kernel_saving.results}, {"classes", c}};
    const LoneKernelSaving& l = p.lone_kernel_saving;
    nlohmann::json kinds = nlohmann::json::object();
    if (std::isfinite(l.spatial_conv_s_per_byte))
      kinds["spatial_conv_us_per_mb"] = l.spatial_conv_s_per_byte * 1e12;
    if (std::isfinite(l.other_conv_share)) kinds["other_conv"] = l.other_conv_share;
    if (std::isfinite(l.merged_share)) kinds["merged"] = l.merged_share;
    if (!kinds.empty()) j["lone_kernel_saving"]["kinds"] = std::move(kinds);
  }
  if (!p.measured_ops.empty()) j["measured_ops"] = p.measured_ops;
  if (!p.calibration_flags.empty()) j["calibration_flags"] = p.calibration_flags;
  if (!p.bandwidth_curve.empty()) {
    nlohmann::json follow = nlohmann::json::object();
    for (int i = 0; i < kKernelClassCount; ++i)
      follow[kernel_class_name(static_cast<KernelClass>(i))] =
          p.bandwidth_curve.follow[static_cast<std::size_t>(i)];
    nlohmann::json points = nlohmann::json::array();
    for (const auto& [b, v] : p.bandwidth_curve.points) points.push_back({b, v});
    j["bandwidth_curve"] = {{"points", points}, {"follow", follow}};
  }
  if (!p.cpu_model.empty()) j["cpu_model"] = p.cpu_model;
  if (!p.fxc_version.empty()) j["fxc_version"] = p.fxc_version;
  if (!p.winograd.shapes.empty()) j["winograd"] = to_json(p.winograd);
  return j;
}

namespace {

// A profile written before the pooling class (kernel_class.h) measured pooling as part
// of its depthwise class: pooling keeps those figures. The saving model stays unfitted
// for pooling (its depthwise fit mixed the two; the difference of times stands in).
void pooling_from_depthwise(const nlohmann::json& j, DeviceProfile& p) {
  auto it = j.find("kernel_classes");
  if (it == j.end() || !it->is_object() || it->contains("pooling") || !it->contains("depthwise"))
    return;
  const auto dw = static_cast<std::size_t>(KernelClass::Depthwise);
  const auto pool = static_cast<std::size_t>(KernelClass::Pooling);
  p.kernel_classes[pool] = p.kernel_classes[dw];
  p.fused_classes[pool] = p.fused_classes[dw];
  p.saving_uncertainty[pool] = p.saving_uncertainty[dw];
  p.lone_kernel_saving.share[pool] = p.lone_kernel_saving.share[dw];
  p.bandwidth_curve.follow[pool] = p.bandwidth_curve.follow[dw];
}

}  // namespace

DeviceProfile device_profile_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("device profile: expected a JSON object");
  DeviceProfile p;
  try {
    p.name = j.at("name").get<std::string>();
    p.description = j.value("description", "");
    p.source = j.value("source", "user profile, unverified");
    p.memory_bandwidth_bytes_per_s = j.at("memory_bandwidth_bytes_per_s").get<double>();
    p.peak_flops = j.at("peak_flops").get<double>();
    p.launch_overhead_s = j.at("launch_overhead_s").get<double>();
    p.onchip_capacity_bytes = j.at("onchip_capacity_bytes").get<int64_t>();
    p.l2_bytes = j.value("l2_bytes", int64_t{0});
    p.capacity_note = j.value("capacity_note", "");
    p.isa = j.value("isa", "");
    p.int8_speedup = j.value("int8_speedup", 0.0);
    if (!(p.int8_speedup >= 0)) throw Error("device profile: \"int8_speedup\" must be >= 0");
    p.calibrated = j.value("calibrated", false);
    p.calibration = j.value("calibration", "");
    if (auto it = j.find("kernel_classes"); it != j.end() && !it->is_null()) {
      if (!it->is_object()) throw Error("device profile: \"kernel_classes\" is not an object");
      for (const auto& [key, rates] : it->items()) {
        auto c = kernel_class_from_name(key);
        if (!c) throw Error("device profile: unknown kernel class '" + key + "'");
        KernelClassRates& r = p.kernel_classes[static_cast<std::size_t>(*c)];
        r.bandwidth_bytes_per_s = rates.value("bandwidth_bytes_per_s", 0.0);
        r.flops_per_s = rates.value("flops_per_s", 0.0);
      }
    }
    if (auto it = j.find("fused_kernel_classes"); it != j.end() && !it->is_null()) {
      if (!it->is_object())
        throw Error("device profile: \"fused_kernel_classes\" is not an object");
      for (const auto& [key, rates] : it->items()) {
        auto c = kernel_class_from_name(key);
        if (!c) throw Error("device profile: unknown kernel class '" + key + "'");
        FusedClassRates& r = p.fused_classes[static_cast<std::size_t>(*c)];
        r.scale = rates.value("scale", 0.0);
        r.epilogue_bandwidth_bytes_per_s = rates.value("epilogue_bandwidth_bytes_per_s", 0.0);
        r.fixed_s = rates.value("fixed_s", 0.0);
      }
    }
    if (auto it = j.find("saving_model"); it != j.end() && !it->is_null())
      p.saving_model = saving_coefficients_from_json(*it);
    if (auto it = j.find("winograd"); it != j.end() && !it->is_null())
      p.winograd = winograd_support_from_json(*it);
    if (auto it = j.find("saving_uncertainty"); it != j.end() && !it->is_null()) {
      if (!it->is_object()) throw Error("device profile: \"saving_uncertainty\" is not an object");
      for (const auto& [key, u] : it->items()) {
        auto c = kernel_class_from_name(key);
        if (!c) throw Error("device profile: unknown kernel class '" + key + "'");
        SavingUncertainty& s = p.saving_uncertainty[static_cast<std::size_t>(*c)];
        s.groups = u.at("groups").get<int>();
        s.rel_rms = u.at("rel_rms").get<double>();
        s.rel_half_width = u.value("rel_half_width", 0.0);
        s.coverage = u.value("coverage", 0.0);
      }
    }
    if (auto it = j.find("lone_kernel_saving"); it != j.end() && !it->is_null()) {
      if (!it->is_object() || !it->contains("classes") || !it->at("classes").is_object())
        throw Error("device profile: \"lone_kernel_saving\" needs an object \"classes\"");
      p.lone_kernel_saving.results = it->value("results", 0);
      for (const auto& [key, v] : it->at("classes").items()) {
        auto c = kernel_class_from_name(key);
        if (!c) throw Error("device profile: unknown kernel class '" + key + "'");
        p.lone_kernel_saving.share[static_cast<std::size_t>(*c)] = v.get<double>();
      }
      if (auto k = it->find("kinds"); k != it->end() && !k->is_null()) {
        if (!k->is_object())
          throw Error("device profile: \"lone_kernel_saving\" \"kinds\" is not an object");
        // null or absent: not fitted.
        auto get = [&](const char* key, double scale, double& out) {
          if (auto v = k->find(key); v != k->end() && !v->is_null()) out = v->get<double>() * scale;
        };
        LoneKernelSaving& l = p.lone_kernel_saving;
        get("spatial_conv_us_per_mb", 1e-12, l.spatial_conv_s_per_byte);
        get("other_conv", 1, l.other_conv_share);
        get("merged", 1, l.merged_share);
      }
    }
    if (auto it = j.find("bandwidth_curve"); it != j.end() && !it->is_null()) {
      if (!it->is_object()) throw Error("device profile: \"bandwidth_curve\" is not an object");
      for (const auto& pt : it->at("points")) {
        if (!pt.is_array() || pt.size() != 2)
          throw Error("device profile: bandwidth_curve points must be [bytes, bytes/s] pairs");
        p.bandwidth_curve.points.emplace_back(pt[0].get<double>(), pt[1].get<double>());
      }
      if (auto f = it->find("follow"); f != it->end() && !f->is_null()) {
        for (const auto& [key, v] : f->items()) {
          auto c = kernel_class_from_name(key);
          if (!c) throw Error("device profile: unknown kernel class '" + key + "'");
          p.bandwidth_curve.follow[static_cast<std::size_t>(*c)] = v.get<double>();
        }
      }
    }
    p.measured_ops = j.value("measured_ops", std::vector<std::string>{});
    p.calibration_flags = j.value("calibration_flags", std::vector<std::string>{});
    p.cpu_model = j.value("cpu_model", "");
    p.fxc_version = j.value("fxc_version", "");
    pooling_from_depthwise(j, p);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("device profile: ") + e.what());
  }
  p.check();
  return p;
}

DeviceProfile load_device_profile(const std::string& path) {
  return load_json_file(path, "device profile",
                        [](const nlohmann::json& doc) { return device_profile_from_json(doc); });
}

void save_device_profile(const DeviceProfile& p, const std::string& path) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream out(path);
  if (!out) throw FileError(path, "cannot write device profile");
  out << to_json(p).dump(2) << "\n";
  if (!out) throw FileError(path, "write failed");
}

}  // namespace fx
