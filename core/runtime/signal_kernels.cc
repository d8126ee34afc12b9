// SPDX-License-Identifier: Apache-2.0
// Signal kernels at reference speed (a direct O(n^2) transform, no corpus model
// uses them): HannWindow, HammingWindow, BlackmanWindow, DFT, STFT,
// MelWeightMatrix. Sums are taken in double.

#include <cmath>
#include <numbers>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

int64_t scalar_int(const Tensor& t, const char* what) {
  if (t.numel() != 1) throw Error(std::string(what) + " must be a scalar, got " + t.str());
  return t.to_int64s()[0];
}

double scalar_double(const Tensor& t, const char* what) {
  if (t.numel() != 1) throw Error(std::string(what) + " must be a scalar, got " + t.str());
  return static_cast<double>(t.to_floats()[0]);
}

// Writes `v` into a float32 or float64 tensor (the ops' output_datatype).
void store(Tensor& y, const std::vector<double>& v) {
  if (y.dtype() == DType::Float64) {
    for (std::size_t i = 0; i < v.size(); ++i) y.data<double>()[i] = v[i];
  } else {
    for (std::size_t i = 0; i < v.size(); ++i) y.data<float>()[i] = static_cast<float>(v[i]);
  }
}

DType float_output_type(const Node& n, const char* op) {
  const auto t = static_cast<DType>(n.attrs.get_int("output_datatype", 1));
  if (t != DType::Float32 && t != DType::Float64)
    throw Error(std::string(op) + ": output_datatype " + std::string(dtype_name(t)) +
                " is not supported (float32, float64)");
  return t;
}

// Generalized cosine window a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), where N is
// the size (periodic) or size - 1 (symmetric).
void add_window(KernelTable& t, const std::string& op, double a0, double a1, double a2) {
  t[op] = [=](const Graph&, const Node& n) {
    const DType out = float_output_type(n, op.c_str());
    const bool periodic = n.attrs.get_int("periodic", 1) != 0;
    return fn_kernel([=](KernelContext& ctx) {
      const int64_t size = scalar_int(ctx.in(0), "window size");
      if (size < 0) throw Error(op + ": negative size " + std::to_string(size));
      Tensor& y = ctx.output(0, out, {size});
      const double N = static_cast<double>(periodic ? size : size - 1);
      std::vector<double> w(static_cast<std::size_t>(size));
      for (int64_t i = 0; i < size; ++i) {
        const double x = N > 0 ? 2 * std::numbers::pi * static_cast<double>(i) / N : 0;
        w[static_cast<std::size_t>(i)] = a0 - a1 * std::cos(x) + a2 * std::cos(2 * x);
      }
      store(y, w);
    });
  };
}

// Complex values of a [..., 1|2] tensor as doubles (imaginary 0 for real input).
std::vector<double> complex_of(const Tensor& x) {
  const int64_t c = x.dim(-1);
  if (c != 1 && c != 2)
    throw Error("last dimension must be 1 (real) or 2 (complex), got " + x.str());
  if (x.dtype() == DType::Float64) {
    const double* d = x.data<double>();
    std::vector<double> out(static_cast<std::size_t>(x.numel() / c * 2), 0.0);
    for (int64_t i = 0; i < x.numel() / c; ++i) {
      out[2 * i] = d[i * c];
      if (c == 2) out[2 * i + 1] = d[i * c + 1];
    }
    return out;
  }
  const std::vector<float> f = x.to_floats();
  std::vector<double> out(static_cast<std::size_t>(x.numel() / c * 2), 0.0);
  for (int64_t i = 0; i < x.numel() / c; ++i) {
    out[2 * i] = f[static_cast<std::size_t>(i * c)];
    if (c == 2) out[2 * i + 1] = f[static_cast<std::size_t>(i * c + 1)];
  }
  return out;
}

// out[k] = sum_j in[j] e^(-+2 pi i j k / n) for k < bins, over `len` inputs zero-padded
// or truncated to n; stride is in complex elements.
void dft_line(const double* in, int64_t len, int64_t stride, double* out, int64_t ostride,
              int64_t n, int64_t bins, bool inverse) {
  const double sign = inverse ? 1.0 : -1.0;
  const int64_t m = std::min(len, n);
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < m; ++j) {
      // (j * k) mod n keeps the angle small, so cos/sin stay exact for long signals.
      const double a =
          sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      const double c = std::cos(a), s = std::sin(a);
      const double xr = in[2 * j * stride], xi = in[2 * j * stride + 1];
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) {
      re /= static_cast<double>(n);
      im /= static_cast<double>(n);
    }
    out[2 * k * ostride] = re;
    out[2 * k * ostride + 1] = im;
  }
}

void dft_kernel(KernelContext& ctx, int64_t axis_attr, bool inverse, bool onesided) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64)
    throw Error("DFT: unsupported dtype " + std::string(dtype_name(x.dtype())));
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank < 2) throw Error("DFT: input must have rank >= 2, got " + x.str());
  int64_t axis = ctx.input(2) ? scalar_int(ctx.in(2), "DFT axis") : axis_attr;
  axis = normalize_axis(axis, rank - 1);  // the last dim holds the real/imag pair
  const int64_t len = x.dim(axis);
  const int64_t n = ctx.input(1) ? scalar_int(ctx.in(1), "dft_length") : len;
  if (n <= 0) throw Error("DFT: dft_length must be positive, got " + std::to_string(n));
  const int64_t bins = onesided ? n / 2 + 1 : n;
  std::vector<int64_t> od = x.dims();
  od[static_cast<std::size_t>(axis)] = bins;
  od.back() = 2;
  Tensor& y = ctx.output(0, x.dtype(), od);
  const std::vector<double> in = complex_of(x);
  std::vector<double> out(static_cast<std::size_t>(y.numel()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      dft_line(in.data() + 2 * (o * len * inner + i), len, inner,
               out.data() + 2 * (o * bins * inner + i), inner, n, bins, inverse);
    }
  }
  store(y, out);
}

void stft_kernel(KernelContext& ctx, bool onesided) {
  const Tensor& x = ctx.in(0);
  if (x.rank() != 3) throw Error("STFT: signal must be [batch, length, 1|2], got " + x.str());
  const int64_t step = scalar_int(ctx.in(1), "frame_step");
  const Tensor* window = ctx.input(2);
  int64_t frame =
      ctx.input(3) ? scalar_int(ctx.in(3), "frame_length") : (window ? window->numel() : 0);
  if (frame <= 0) throw Error("STFT: needs a window or a frame_length");
  if (window && window->numel() != frame)
    throw Error("STFT: window has " + std::to_string(window->numel()) +
                " values, frame_length is " + std::to_string(frame));
  if (step <= 0) throw Error("STFT: frame_step must be positive");
  const int64_t batch = x.dim(0), length = x.dim(1);
  if (length < frame) throw Error("STFT: signal shorter than one frame");
  const int64_t frames = (length - frame) / step + 1;
  const int64_t bins = onesided ? frame / 2 + 1 : frame;
  Tensor& y = ctx.output(0, x.dtype(), {batch, frames, bins, 2});
  const std::vector<double> in = complex_of(x);
  std::vector<float> w =
      window ? window->to_floats() : std::vector<float>(static_cast<std::size_t>(frame), 1.0f);
  std::vector<double> buf(static_cast<std::size_t>(2 * frame));
  std::vector<double> out(static_cast<std::size_t>(y.numel()));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      const double* s = in.data() + 2 * (b * length + f * step);
      for (int64_t j = 0; j < frame; ++j) {
        buf[2 * j] = s[2 * j] * w[static_cast<std::size_t>(j)];
        buf[2 * j + 1] = s[2 * j + 1] * w[static_cast<std::size_t>(j)];
      }
      dft_line(buf.data(), frame, 1, out.data() + 2 * (b * frames + f) * bins, 1, frame, bins,
               false);
    }
  }
  store(y, out);
}

// Triangular filters evenly spaced on the mel scale, as ONNX's reference computes
// them (integer bin edges).
void mel_kernel(KernelContext& ctx, DType out_type) {
  const int64_t mels = scalar_int(ctx.in(0), "num_mel_bins");
  const int64_t dft = scalar_int(ctx.in(1), "dft_length");
  const int64_t rate = scalar_int(ctx.in(2), "sample_rate");
  const double lo = scalar_double(ctx.in(3), "lower_edge_hertz");
  const double hi = scalar_double(ctx.in(4), "upper_edge_hertz");
  if (mels <= 0 || dft <= 0 || rate <= 0)
    throw Error("MelWeightMatrix: num_mel_bins, dft_length and sample_rate must be positive");
  const int64_t spec_bins = dft / 2 + 1;
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double lo_mel = to_mel(lo), hi_mel = to_mel(hi);
  const double step = (hi_mel - lo_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edge(static_cast<std::size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz =
        700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595.0) - 1.0);
    edge[static_cast<std::size_t>(i)] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> w(static_cast<std::size_t>(spec_bins * mels), 0.0);
  auto at = [&](int64_t bin, int64_t m) -> double& {
    if (bin < 0 || bin >= spec_bins)
      throw Error(
          "MelWeightMatrix: a filter edge falls outside the spectrum (upper_edge_hertz above "
          "the Nyquist frequency?)");
    return w[static_cast<std::size_t>(bin * mels + m)];
  };
  for (int64_t m = 0; m < mels; ++m) {
    const int64_t l = edge[static_cast<std::size_t>(m)], c = edge[static_cast<std::size_t>(m + 1)],
                  r = edge[static_cast<std::size_t>(m + 2)];
    if (c == l) {
      at(c, m) = 1;
    } else {
      for (int64_t j = l; j <= c; ++j)
        at(j, m) = static_cast<double>(j - l) / static_cast<double>(c - l);
    }
    for (int64_t j = c; j < r; ++j)
      at(j, m) = static_cast<double>(r - j) / static_cast<double>(r - c);
  }
  Tensor& y = ctx.output(0, out_type, {spec_bins, mels});
  store(y, w);
}

}  // namespace

void register_signal_kernels(KernelTable& t) {
  add_window(t, "HannWindow", 0.5, 0.5, 0.0);
  add_window(t, "HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0);
  add_window(t, "BlackmanWindow", 0.42, 0.5, 0.08);
  t["DFT"] = [](const Graph&, const Node& n) {
    const int64_t axis = n.attrs.get_int("axis", 1);
    const bool inverse = n.attrs.get_int("inverse", 0) != 0;
    const bool onesided = n.attrs.get_int("onesided", 0) != 0;
    if (inverse && onesided) throw Error("DFT: inverse with onesided is not defined");
    return fn_kernel([=](KernelContext& ctx) { dft_kernel(ctx, axis, inverse, onesided); });
  };
  t["STFT"] = [](const Graph&, const Node& n) {
    const bool onesided = n.attrs.get_int("onesided", 1) != 0;
    return fn_kernel([=](KernelContext& ctx) { stft_kernel(ctx, onesided); });
  };
  t["MelWeightMatrix"] = [](const Graph&, const Node& n) {
    const DType out = float_output_type(n, "MelWeightMatrix");
    return fn_kernel([=](KernelContext& ctx) { mel_kernel(ctx, out); });
  };
}

}  // namespace fx
