// SPDX-License-Identifier: Apache-2.0
#include "calibration/machine_facts.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/statistics.h"

namespace fx {
namespace {

using Clock = std::chrono::steady_clock;

int64_t cache_bytes(int index, int64_t fallback) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
  std::string s;
  if (!(in >> s) || s.empty()) return fallback;
  int64_t v = std::atoll(s.c_str());
  if (s.back() == 'K') v *= 1024;
  if (s.back() == 'M') v *= 1024 * 1024;
  return v > 0 ? v : fallback;
}

std::string cache_type(int index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/type");
  std::string s;
  in >> s;
  return s;
}

int cache_level(int index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/level");
  int l = 0;
  in >> l;
  return l;
}

}  // namespace

MachineFacts host_machine_facts() {
  MachineFacts f;
  f.threads = std::max(1u, std::thread::hardware_concurrency());
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  double mhz = 0;
  while (std::getline(cpuinfo, line)) {
    auto value = [&] {
      auto colon = line.find(':');
      std::string v = colon == std::string::npos ? "" : line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    };
    if (f.cpu_model.empty() && line.rfind("model name", 0) == 0) f.cpu_model = value();
    if (mhz == 0 && line.rfind("cpu MHz", 0) == 0) mhz = std::atof(value().c_str());
  }
  std::ifstream maxf("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (maxf >> khz && khz > 0) {
    f.ghz = khz / 1e6;
    f.ghz_is_maximum = true;
  } else {
    f.ghz = mhz > 0 ? mhz / 1e3 : 0;
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.simd_floats = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx") ? 8 : 4;
#endif
  for (int i = 0; i < 5; ++i) {
    const int level = cache_level(i);
    const std::string type = cache_type(i);
    if (level == 1 && type == "Data") f.caches.l1d = cache_bytes(i, f.caches.l1d);
    if (level == 2) f.caches.l2 = cache_bytes(i, f.caches.l2);
    if (level == 3) f.caches.l3 = cache_bytes(i, f.caches.l3);
  }
  return f;
}

std::vector<int64_t> copy_curve_sizes(const CacheSizes& c) {
  // Around each cache size: the bandwidth falls over a range of working sets (shared
  // ways, prefetchers, the copy's two buffers), which one point per level would skip.
  std::vector<int64_t> s = {c.l1d / 2, c.l1d,    2 * c.l1d, c.l2 / 4, c.l2 / 2, c.l2,
                            2 * c.l2,  c.l3 / 8, c.l3 / 2,  c.l3,     2 * c.l3};
  for (auto& b : s) b = std::clamp<int64_t>(b, 4096, kMaxGridTensorBytes);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

BandwidthCurve bandwidth_curve_of(const std::vector<CopyPoint>& copy) {
  BandwidthCurve c;
  for (const CopyPoint& p : copy)
    if (p.bytes > 0 && p.bytes_per_s > 0 && std::isfinite(p.bytes_per_s) &&
        (c.points.empty() || 2.0 * double(p.bytes) > c.points.back().first))
      c.points.emplace_back(2.0 * double(p.bytes), p.bytes_per_s);
  if (c.points.size() < 2) c.points.clear();
  return c;
}

std::vector<CopyPoint> measure_copy_curve(const CacheSizes& caches, int repeats) {
  std::vector<CopyPoint> out;
  for (int64_t bytes : copy_curve_sizes(caches)) {
    std::vector<char> a(std::size_t(bytes), 1), b(std::size_t(bytes), 0);
    // Each repeat copies at least 4 MiB (and the buffer at least twice), so that the
    // clock's resolution and one interruption are small against it.
    const int64_t copies = std::max<int64_t>(2, (4LL << 20) / bytes);
    std::memcpy(b.data(), a.data(), a.size());  // warm: caches, pages
    std::vector<double> rates;
    for (int r = 0; r < repeats; ++r) {
      auto t0 = Clock::now();
      for (int64_t k = 0; k < copies; ++k) {
        std::memcpy(b.data(), a.data(), a.size());
        a[std::size_t(k % bytes)] = b[std::size_t((k * 7) % bytes)];  // keep the copies
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (s > 0) rates.push_back(2.0 * double(bytes) * double(copies) / s);
    }
    out.push_back({bytes, median_or_nan(rates), relative_dispersion(rates)});
  }
  return out;
}

BusyProbe probe_busy(int repeats) {
  BusyProbe p;
  // A dependent chain of multiply-adds: its time is the core's clock and nothing else
  // (no memory), so a change in it is another process taking the core.
  for (int r = 0; r < repeats; ++r) {
    volatile double seed = 1.0000001;
    double x = seed;
    auto t0 = Clock::now();
    for (int i = 0; i < 2000000; ++i) x = x * 0.9999999 + 1e-7;
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    seed = x;
    p.reference_s.push_back(s);
  }
  std::ifstream load("/proc/loadavg");
  double l = NAN;
  if (load >> l) p.loadavg1 = l;
  return p;
}

}  // namespace fx
