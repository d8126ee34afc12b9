// SPDX-License-Identifier: Apache-2.0
// Runs the generated CUDA memory-bound kernels of `fxc codegen --bandwidth MIB
// --cuda-out gen.cu` on the device and compares each with the generated stream copy
// (the bandwidth floor: what the device sustains for read + write) and with a
// cudaMemcpy device-to-device. Built by bench/steps/70_gpu.sh:
//
//   nvcc -O3 -arch=native -o bw bench/gpu/bandwidth.cu gen.cu && ./bw MIB RUNS
//
// Prints one line per kernel: median and fastest time, GB/s (bytes = inputs read once +
// outputs written once) and the ratio to the stream copy. Each kernel's output is
// checked against a host reference on a few rows first.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

extern "C" int fx_stream_copy_cuda(const float* const*, float* const*, const int64_t*, void*);
extern "C" int fx_chain_cuda(const float* const*, float* const*, const int64_t*, void*);
extern "C" int fx_layernorm_cuda(const float* const*, float* const*, const int64_t*, void*);
extern "C" int fx_softmax_cuda(const float* const*, float* const*, const int64_t*, void*);

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

struct Timing {
  double median_ms, min_ms;
};

Timing time_it(const std::function<void()>& f, int runs) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();  // warm-up
  CHECK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t[0]};
}

int main(int argc, char** argv) {
  const double mib = argc > 1 ? std::atof(argv[1]) : 256;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 50;
  const int64_t n = static_cast<int64_t>(mib * 1024 * 1024 / 4);
  const int64_t cols = 1024, rows = std::max<int64_t>(1, n / cols), nm = rows * cols;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::vector<float> hx(n), hm(nm), ones(cols, 1.f), zeros(cols, 0.f);
  uint64_t s = 1;
  for (auto* v : {&hx, &hm})
    for (auto& f : *v) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      f = float((s >> 40) % 2000) / 1000.f - 1.f;
    }
  float *x, *m, *sc, *bi, *y0, *y1, *y2, *y3, *y4;
  for (float** p : {&x, &y0, &y1, &y4}) CHECK(cudaMalloc(p, n * 4));
  for (float** p : {&m, &y2, &y3}) CHECK(cudaMalloc(p, nm * 4));
  CHECK(cudaMalloc(&sc, cols * 4));
  CHECK(cudaMalloc(&bi, cols * 4));
  CHECK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(m, hm.data(), nm * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(sc, ones.data(), cols * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(bi, zeros.data(), cols * 4, cudaMemcpyHostToDevice));
  const int64_t dx[1] = {n}, dm[2] = {rows, cols};
  const float* in_x[1] = {x};
  const float* in_ln[3] = {m, sc, bi};
  const float* in_m[1] = {m};
  float* o0[1] = {y0};
  float* o1[1] = {y1};
  float* o2[1] = {y2};
  float* o3[1] = {y3};
  auto launch = [](int rc) {
    if (rc != 0) {
      std::fprintf(stderr, "launch failed: %s\n", cudaGetErrorString((cudaError_t)rc));
      std::exit(1);
    }
  };
  struct K {
    std::string name;
    int64_t elems;
    std::function<void()> run;
  };
  std::vector<K> ks{
      {"stream-copy", n, [&] { launch(fx_stream_copy_cuda(in_x, o0, dx, nullptr)); }},
      {"memcpy-d2d", n, [&] { CHECK(cudaMemcpyAsync(y4, x, n * 4, cudaMemcpyDeviceToDevice)); }},
      {"chain", n, [&] { launch(fx_chain_cuda(in_x, o1, dx, nullptr)); }},
      {"layernorm", nm, [&] { launch(fx_layernorm_cuda(in_ln, o2, dm, nullptr)); }},
      {"softmax", nm, [&] { launch(fx_softmax_cuda(in_m, o3, dm, nullptr)); }}};
  // Correctness on the first rows before timing.
  for (auto& k : ks) k.run();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> r(4 * cols);
  double err = 0;
  CHECK(cudaMemcpy(r.data(), y1, 4 * cols * 4, cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < 4 * cols; ++i) {
    const double v = hx[i] * 1.5 + 0.25, e = hx[i] / (1 + std::exp(-v));
    err = std::max(err, std::fabs(r[i] - e));
  }
  CHECK(cudaMemcpy(r.data(), y2, 4 * cols * 4, cudaMemcpyDeviceToHost));
  for (int64_t row = 0; row < 4; ++row) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j) mu += hm[row * cols + j];
    mu /= cols;
    for (int64_t j = 0; j < cols; ++j) var += std::pow(hm[row * cols + j] - mu, 2);
    const double inv = 1 / std::sqrt(var / cols + 1e-5);
    for (int64_t j = 0; j < cols; ++j)
      err = std::max(err, std::fabs(r[row * cols + j] - (hm[row * cols + j] - mu) * inv));
  }
  CHECK(cudaMemcpy(r.data(), y3, 4 * cols * 4, cudaMemcpyDeviceToHost));
  for (int64_t row = 0; row < 4; ++row) {
    double mx = -1e30, sum = 0;
    for (int64_t j = 0; j < cols; ++j) mx = std::max(mx, double(hm[row * cols + j]));
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(hm[row * cols + j] - mx);
    for (int64_t j = 0; j < cols; ++j)
      err = std::max(err, std::fabs(r[row * cols + j] - std::exp(hm[row * cols + j] - mx) / sum));
  }
  std::printf("%s, %d SMs; tensors of %lld floats (%.0f MiB), %d runs; max abs error %.2g\n",
              prop.name, prop.multiProcessorCount, (long long)n, n * 4 / 1048576.0, runs, err);
  double copy_ms = 0;
  for (auto& k : ks) {
    Timing t = time_it(k.run, runs);
    const double bw = 2.0 * double(k.elems) * 4 / (t.median_ms * 1e6);  // GB/s
    if (k.name == "stream-copy") copy_ms = t.median_ms;
    // Time relative to the copy, per byte: 1.00x is the bandwidth floor.
    const double per_byte = (t.median_ms / double(k.elems)) / (copy_ms / double(n));
    std::printf("%-12s median %8.3f ms (fastest %8.3f)  %7.1f GB/s  %5.2fx the stream copy's time per byte\n",
                k.name.c_str(), t.median_ms, t.min_ms, bw, per_byte);
  }
  return err < 1e-3 ? 0 : 2;
}
