// SPDX-License-Identifier: Apache-2.0
// Random generators: RandomUniform(Like), RandomNormal(Like), Bernoulli. With a
// `seed` attribute a kernel's sequence is reproducible run to run (though not
// numpy's, so ONNX's expected outputs cannot be matched); without one it is seeded
// from std::random_device once per kernel.

#include <cstring>
#include <mutex>
#include <random>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

class Rng {
 public:
  explicit Rng(const Node& n) {
    if (n.attrs.has("seed")) {
      const float s = n.attrs.get_float("seed", 0.0f);
      uint32_t bits;
      std::memcpy(&bits, &s, 4);
      gen_.seed(bits);
    } else {
      gen_.seed(std::random_device{}());
    }
  }
  // Fills y (float32/float64) from `dist`; kernels may run from several executors.
  template <class Dist>
  void fill(Tensor& y, Dist dist) {
    std::lock_guard<std::mutex> lock(mu_);
    if (y.dtype() == DType::Float64) {
      for (int64_t i = 0; i < y.numel(); ++i) y.data<double>()[i] = dist(gen_);
    } else if (y.dtype() == DType::Float32) {
      for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = static_cast<float>(dist(gen_));
    } else {
      throw Error("random ops produce float32 or float64, not " +
                  std::string(dtype_name(y.dtype())));
    }
  }
  double uniform() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::uniform_real_distribution<double>(0, 1)(gen_);
  }

 private:
  std::mt19937_64 gen_;
  std::mutex mu_;
};

// The `dtype` attribute, else `like`'s dtype (the *Like ops), else float32.
DType out_type(const Node& n, DType like) {
  return n.attrs.has("dtype") ? static_cast<DType>(n.attrs.get_int("dtype", 1)) : like;
}

template <class MakeDist>
void add_random(KernelTable& t, const std::string& op, bool like, MakeDist make) {
  t[op] = [=](const Graph&, const Node& n) {
    auto rng = std::make_shared<Rng>(n);
    auto dist = make(n);
    const std::vector<int64_t> shape = n.attrs.get_ints("shape");
    return fn_kernel([=](KernelContext& ctx) {
      const DType dt = like ? out_type(n, ctx.in(0).dtype()) : out_type(n, DType::Float32);
      Tensor& y = ctx.output(0, dt, like ? ctx.in(0).dims() : shape);
      rng->fill(y, dist);
    });
  };
}

}  // namespace

void register_random_kernels(KernelTable& t) {
  auto uniform = [](const Node& n) {
    return std::uniform_real_distribution<double>(n.attrs.get_float("low", 0.0f),
                                                  n.attrs.get_float("high", 1.0f));
  };
  auto normal = [](const Node& n) {
    return std::normal_distribution<double>(n.attrs.get_float("mean", 0.0f),
                                            n.attrs.get_float("scale", 1.0f));
  };
  add_random(t, "RandomUniform", false, uniform);
  add_random(t, "RandomUniformLike", true, uniform);
  add_random(t, "RandomNormal", false, normal);
  add_random(t, "RandomNormalLike", true, normal);
  t["Bernoulli"] = [](const Graph&, const Node& n) {
    auto rng = std::make_shared<Rng>(n);
    return fn_kernel([rng, n](KernelContext& ctx) {
      const Tensor& p = ctx.in(0);
      const DType dt = out_type(n, p.dtype());
      Tensor& y = ctx.output(0, dt, p.dims());
      const std::vector<float> prob = p.to_floats();
      dispatch_all(dt, "Bernoulli", [&](auto tag) {
        using T = decltype(tag);
        for (std::size_t i = 0; i < prob.size(); ++i)
          y.data<T>()[i] = static_cast<T>(rng->uniform() < prob[i] ? 1 : 0);
      });
    });
  };
}

}  // namespace fx
