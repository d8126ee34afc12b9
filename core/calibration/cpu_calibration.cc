// SPDX-License-Identifier: Apache-2.0
#include "calibration/cpu_calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "calibration/machine_facts.h"
#include "calibration/step_overhead.h"
#include "device/device_presets.h"
#include "profile/winograd_probe.h"
#include "runtime/int8_exact.h"
#include "runtime/thread_pool.h"
#include "util/stopwatch.h"
#include "util/version.h"

namespace fx {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Copy bandwidth over a 64 MiB buffer (beyond any L3 here); best of a few passes.
double measure_bandwidth(double budget_s) {
  const std::size_t bytes = 64u << 20;
  std::vector<char> a(bytes, 1), b(bytes, 0);  // touched, so no page faults are timed
  double best = 0;
  auto start = Clock::now();
  for (int pass = 0; pass < 6 && (pass < 2 || seconds_since(start) < budget_s); ++pass) {
    auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    double s = seconds_since(t0);
    a[static_cast<std::size_t>(pass)] = b[bytes - 1 - static_cast<std::size_t>(pass)];
    if (s > 0) best = std::max(best, 2.0 * double(bytes) / s);  // read + write
  }
  return best;
}

}  // namespace

// oneDNN's matmul as the runtime calls it (plain activations, weights reordered
// once into the layout oneDNN picks), best of several runs on all OpenMP threads.
namespace {

// An n x n x n matmul of these element types (a x b -> c), prepared once (weights in
// oneDNN's layout, JIT warmed up); seconds() times one run.
class GemmBench {
 public:
  GemmBench(int64_t n, dnnl::memory::data_type ta, dnnl::memory::data_type tb,
            dnnl::memory::data_type tc)
      : n_(n), eng_(dnnl::engine::kind::cpu, 0), st_(eng_) {
    using tag = dnnl::memory::format_tag;
    dnnl::memory::desc a_md({n, n}, ta, tag::ab), b_user({n, n}, tb, tag::ab),
        c_md({n, n}, tc, tag::ab), b_any({n, n}, tb, tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), eng_);
    mm_ = dnnl::matmul(pd);
    // Bytes enough for any of the types (4 per element); small values, so that an int8
    // product does not saturate and a float one stays finite.
    const auto elems = static_cast<std::size_t>(n * n);
    a_.assign(elems, 0.5f), b_.assign(elems, 0.25f), c_.resize(elems);
    if (ta != dnnl::memory::data_type::f32)
      std::fill_n(reinterpret_cast<char*>(a_.data()), elems, 1);
    if (tb != dnnl::memory::data_type::f32)
      std::fill_n(reinterpret_cast<char*>(b_.data()), elems, 1);
    dnnl::memory am(a_md, eng_, a_.data()), bu(b_user, eng_, b_.data()), cm(c_md, eng_, c_.data());
    dnnl::memory bm = bu;
    if (pd.weights_desc() != b_user) {
      bm = dnnl::memory(pd.weights_desc(), eng_);
      dnnl::reorder(bu, bm).execute(st_, bu, bm);
    }
    args_ = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
    mm_.execute(st_, args_);  // warm-up: first touch, JIT
    st_.wait();
  }
  // FLOP/s of one run.
  double flops_once() {
    auto t0 = Clock::now();
    mm_.execute(st_, args_);
    st_.wait();
    const double s = seconds_since(t0);
    return s > 0 ? 2.0 * double(n_) * double(n_) * double(n_) / s : 0;
  }

 private:
  int64_t n_;
  dnnl::engine eng_;
  dnnl::stream st_;
  dnnl::matmul mm_;
  std::vector<float> a_, b_, c_;
  std::unordered_map<int, dnnl::memory> args_;
};

}  // namespace

double measure_gemm_flops(int64_t n, double budget_s) {
  using dt = dnnl::memory::data_type;
  GemmBench f32(n, dt::f32, dt::f32, dt::f32);
  double best = 0;
  auto start = Clock::now();
  for (int i = 0; i < 50 && (i < 3 || seconds_since(start) < budget_s); ++i)
    best = std::max(best, f32.flops_once());
  return best;
}

double measure_int8_speedup(int64_t n, double budget_s) {
  using dt = dnnl::memory::data_type;
  // On one thread: the ratio is a core's (the vector units'), and a team of threads on a
  // shared machine waits at each barrier for a member the scheduler took away.
  OneOmpThread one;
  GemmBench f32(n, dt::f32, dt::f32, dt::f32), s8(n, dt::u8, dt::s8, dt::s32);
  // Run by run alternately, best of each: on a shared machine a run that was not
  // preempted shows what the unit does, and a burst of load hits both sides alike.
  double best_f32 = 0, best_s8 = 0;
  auto start = Clock::now();
  for (int i = 0; i < 400 && (i < 5 || seconds_since(start) < budget_s); ++i) {
    best_f32 = std::max(best_f32, f32.flops_once());
    best_s8 = std::max(best_s8, s8.flops_once());
  }
  if (!(best_f32 > 0 && best_s8 > 0)) return 0;
  // Without VNNI the runtime keeps int8 exact by running each product on two 7-bit
  // weight halves (runtime/int8_exact.h): twice the integer work of the raw product
  // timed here.
  const double passes = onednn_int8_dot_exact() ? 1.0 : 2.0;
  return best_s8 / passes / best_f32;
}

namespace {

// Round trip of an empty task to a waiting worker: the cost of one dispatch.
double measure_dispatch(double budget_s) {
  std::mutex m;
  std::condition_variable cv;
  long long posted = 0, done = 0;
  bool stop = false;
  std::thread worker([&] {
    std::unique_lock lk(m);
    while (true) {
      cv.wait(lk, [&] { return stop || posted > done; });
      if (stop) return;
      ++done;  // the empty task
      cv.notify_all();
    }
  });
  auto start = Clock::now();
  long long n = 0;
  while (n < 200 || (seconds_since(start) < budget_s && n < 200000)) {
    std::unique_lock lk(m);
    ++posted;
    cv.notify_all();
    cv.wait(lk, [&] { return done == posted; });
    ++n;
  }
  double s = seconds_since(start);
  {
    std::lock_guard lk(m);
    stop = true;
  }
  cv.notify_all();
  worker.join();
  return s / double(n);
}

int64_t l2_per_core_bytes() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index2/size");
  std::string s;
  if (!(in >> s) || s.empty()) return 256 * 1024;
  int64_t v = std::atoll(s.c_str());
  char unit = s.back();
  if (unit == 'K') v *= 1024;
  if (unit == 'M') v *= 1024 * 1024;
  return v > 0 ? v : 256 * 1024;
}

// The instruction set oneDNN's kernels use on this machine.
std::string isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace

std::vector<WinogradShape> common_winograd_shapes() {
  std::vector<WinogradShape> out;
  for (int64_t map : {7, 14, 28, 56, 112, 224})
    for (int64_t ic : {64, 128, 256, 512})
      for (int64_t oc : {64, 128, 256, 512})
        out.push_back({ic, oc, map, map, map, map, 1, 1, 1, 1});
  return out;
}

WinogradSupport host_winograd_support(int threads) {
  return probe_winograd(common_winograd_shapes(), threads);
}

DeviceProfile measure_cpu_host(const CalibrationOptions& o) {
  double budget = std::max(0.05, o.time_budget_s);
  DeviceProfile p;
  p.name = "cpu-host";
  p.description = "This machine's CPU (" + std::to_string(std::thread::hardware_concurrency()) +
                  " hardware threads), fp32";
  p.source = "measured on this host " + today();
  const MachineFacts facts = host_machine_facts();
  p.memory_bandwidth_bytes_per_s = measure_bandwidth(budget * 0.3);
  p.peak_flops = measure_gemm_flops(1024, budget * 0.3);
  // One step of the runtime (what a kernel launch is on a CPU); the thread hand-off
  // round trip only where the executor cannot be timed.
  const double step = measure_step_overhead(0, budget * 0.1);
  p.launch_overhead_s = std::isfinite(step) ? step : measure_dispatch(budget * 0.1);
  // The copy bandwidth across this machine's caches: a kernel whose operands stay in L1
  // or L2 streams them several times faster than the DRAM figure above, and the small
  // tensors of a small model never leave them.
  p.bandwidth_curve = bandwidth_curve_of(measure_copy_curve(facts.caches, 3));
  // The curve's gains are relative to its largest working set: the class rates must be
  // its figure there (a best-of copy on a quiet moment against a median on a busy one
  // would put every cache level several times too fast).
  if (!p.bandwidth_curve.empty())
    p.memory_bandwidth_bytes_per_s = p.bandwidth_curve.points.back().second;
  // What the runtime's own elementwise loops stream in L2 (a fraction of memcpy there):
  // the class's rate, set so that the curve gives it at that working set.
  const int64_t in_l2 = std::max<int64_t>(64 * 1024, facts.caches.l2 / 4);
  const double rate = measure_elementwise_rate(0, in_l2, step, budget * 0.1);
  if (std::isfinite(rate))
    p.kernel_classes[static_cast<std::size_t>(KernelClass::Elementwise)].bandwidth_bytes_per_s =
        rate / p.cache_gain(KernelClass::Elementwise, double(in_l2));
  const double relayout = measure_relayout_rate(0, in_l2, step, budget * 0.1);
  if (std::isfinite(relayout))
    p.kernel_classes[static_cast<std::size_t>(KernelClass::DataMovement)].bandwidth_bytes_per_s =
        relayout / p.cache_gain(KernelClass::DataMovement, double(in_l2));
  p.onchip_capacity_bytes = l2_per_core_bytes();
  p.capacity_note = "L2 cache per core";
  p.isa = isa_name();
  p.int8_speedup = measure_int8_speedup(256, budget * 0.1);
  std::ifstream l3("/sys/devices/system/cpu/cpu0/cache/index3/size");
  std::string s;
  if (l3 >> s) p.l2_bytes = std::atoll(s.c_str()) * (s.back() == 'M' ? 1 << 20 : 1024);
  p.winograd = host_winograd_support();
  p.cpu_model = facts.cpu_model;
  p.fxc_version = kVersion;
  return p;
}

DeviceProfile calibrate_cpu_host(const std::string& path) {
  DeviceProfile p = measure_cpu_host();
  save_device_profile(p, path.empty() ? cpu_host_cache_path() : path);
  return p;
}

}  // namespace fx
