// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/conv_layout_costs.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "fused_kernels/conv_path.h"
#include "fused_kernels/depthwise_nhwc.h"
#include "runtime/depthwise_conv.h"
#include "runtime/thread_pool.h"

namespace fx {

namespace {

// The best of a few runs after a warm-up one: the least disturbed by other work on
// the machine, and the caches as warm as a kernel's own tensors between Convs.
template <class F>
double best_us(F&& f) {
  f();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const std::chrono::duration<double, std::micro> d = std::chrono::steady_clock::now() - t0;
    best = std::min(best, d.count());
  }
  return best;
}

std::string dims_key(const std::vector<int64_t>& d) {
  std::string k;
  for (int64_t v : d) k += std::to_string(v) + ",";
  return k;
}

class MeasuredLayoutCosts final : public LayoutCosts {
 public:
  double conversion_us(const std::vector<int64_t>& dims) const override {
    const std::string key = "convert:" + dims_key(dims);
    if (auto v = find(key)) return *v;
    ScopedThreads one(1);
    const auto n = static_cast<std::size_t>(dims[0] * dims[1] * dims[2] * dims[3]);
    std::vector<float> a(n, 0.5f), b(n);
    double sum = 0;
    for (bool to_nhwc : {true, false}) {
      LayoutConversion c;
      c.build(dims, to_nhwc, 1);
      sum += best_us([&] { c.run(a.data(), b.data(), 1); });
    }
    return store(key, sum / 2);
  }

  double depthwise_us(const ConvPrep& p, const std::vector<int64_t>& x, bool nhwc,
                      bool out_nhwc) const override {
    std::string key = "depthwise:" + dims_key(x) + dims_key(p.w_dims) + dims_key(p.strides) +
                      dims_key(p.dilations) + dims_key(p.pads) + p.auto_pad +
                      (nhwc ? (out_nhwc ? ":nhwc" : ":nhwc-nchw") : ":nchw");
    for (const EpilogueOp& op : p.epilogue->ops())
      key += ":" + std::to_string(op.kind) + "/" + std::to_string(op.alpha) + "/" +
             std::to_string(op.beta);
    if (auto v = find(key)) return *v;
    ScopedThreads one(1);
    const ConvGeometry geo = conv_geometry(p, x);
    const DepthwiseShape s = depthwise_shape(p, x, geo);
    std::vector<float> in(static_cast<std::size_t>(s.n * s.c * s.h * s.w), 0.5f);
    std::vector<float> out(static_cast<std::size_t>(s.n * s.c * s.oh * s.ow));
    // The epilogue's residual operands (Sum), as the kernel would read them.
    std::vector<std::vector<float>> res_data;
    std::vector<const float*> res;
    for (const EpilogueOp& op : p.epilogue->ops())
      if (op.kind == EpilogueOp::AddResidual) {
        res_data.emplace_back(out.size(), 0.25f);
        res.push_back(res_data.back().data());
      }
    double us = 0;
    if (nhwc) {
      DepthwiseNhwc dw(s, p.weights, p.bias);
      const bool y_nchw = !out_nhwc && res.empty();
      us = best_us([&] { dw.run(in.data(), out.data(), &*p.epilogue, res, y_nchw); });
    } else {
      us = best_us([&] {
        depthwise_conv2d(s, in.data(), p.weights.data(), p.bias.data(), out.data());
        apply_conv_epilogue(p, geo.out, out.data(), nullptr, res);
      });
    }
    return store(key, us);
  }

 private:
  std::optional<double> find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = memo_.find(key);
    if (it == memo_.end()) return std::nullopt;
    return it->second;
  }
  double store(const std::string& key, double us) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return memo_.emplace(key, us).first->second;
  }

  mutable std::mutex mutex_;
  mutable std::map<std::string, double> memo_;
};

}  // namespace

bool runs_depthwise_path(const ConvPrep& p, const std::vector<int64_t>& x) {
  return x.size() == 4 && p.epilogue && p.group > 1 && p.group == x[1] && p.w_dims[0] == p.group;
}

const LayoutCosts& measured_layout_costs() {
  static const MeasuredLayoutCosts costs;
  return costs;
}

}  // namespace fx
