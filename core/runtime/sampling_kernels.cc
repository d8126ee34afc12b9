// SPDX-License-Identifier: Apache-2.0
// GridSample's kernel: attributes and shapes checked here, the sampling in
// runtime/grid_sample.h.

#include "runtime/grid_sample.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

void grid_sample_kernel(KernelContext& ctx, const GridSampleAttrs& a) {
  const Tensor& x = ctx.in(0);
  const Tensor& grid = ctx.in(1);
  if (x.dtype() != DType::Float32 || grid.dtype() != DType::Float32)
    throw Error("GridSample: float32 input and grid expected, got " + x.str() + " " + grid.str());
  if (x.rank() != 4 || grid.rank() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0))
    throw Error("GridSample: expects X [N,C,H,W] and grid [N,H_out,W_out,2], got " + x.str() + " " +
                grid.str());
  const GridSampleShape s{x.dim(0), x.dim(1), x.dim(2), x.dim(3), grid.dim(1), grid.dim(2)};
  Tensor& y = ctx.output(0, DType::Float32, {s.n, s.c, s.ho, s.wo});
  if (y.numel() == 0) return;
  if (s.h == 0 || s.w == 0) throw Error("GridSample: empty input plane " + x.str());
  grid_sample(a, s, x.data<float>(), grid.data<float>(), y.data<float>());
}

}  // namespace

void register_sampling_kernels(KernelTable& t) {
  t["GridSample"] = [](const Graph&, const Node& n) {
    GridSampleAttrs a;
    const std::string mode = n.attrs.get_string("mode", "bilinear");
    const std::string pad = n.attrs.get_string("padding_mode", "zeros");
    if (mode == "nearest")
      a.mode = GridSampleMode::Nearest;
    else if (mode == "bicubic" || mode == "cubic")
      a.mode = GridSampleMode::Bicubic;
    else if (mode != "bilinear" && mode != "linear")
      throw Error("GridSample: unknown mode '" + mode + "'");
    if (pad == "border")
      a.padding = GridSamplePadding::Border;
    else if (pad == "reflection")
      a.padding = GridSamplePadding::Reflection;
    else if (pad != "zeros")
      throw Error("GridSample: unknown padding_mode '" + pad + "'");
    a.align_corners = n.attrs.get_int("align_corners", 0) != 0;
    return fn_kernel([a](KernelContext& ctx) { grid_sample_kernel(ctx, a); });
  };
}

}  // namespace fx
