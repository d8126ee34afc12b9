// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/fused_conv_kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <typeinfo>
#include <vector>

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "fused_kernels/conv_path.h"
#include "fused_kernels/conv_prep.h"
#include "runtime/overwrite_input.h"
#include "util/error.h"

namespace fx {

namespace {

class FusedConvKernel final : public Kernel, public OverwritesInput {
 public:
  FusedConvKernel(std::shared_ptr<const ConvPrep> prep, ConvLayouts layouts)
      : p_(std::move(prep)), lay_(layouts) {}

  std::shared_ptr<const ConvPrep> shared_prep() const { return p_; }
  const ConvLayouts& layouts() const { return lay_; }

  // The residual of the sum post-op, when the output may take its memory: oneDNN's
  // sum post-op reads each destination element before it writes it, so the residual
  // needs no copy into the output. Only where both are NHWC (the layout plan) and the
  // convolution is not depthwise: that path writes the convolution's result before it
  // reads the residual, and an NCHW residual is reordered into the output.
  // Without a residual, a depthwise convolution on NHWC in and out with stride 1 and
  // "same" padding may write over its input (DepthwiseNhwc::run_in_place); run()
  // copies the input aside when the shapes met at run time do not allow it.
  int overwritable_input() const override {
    if (p_->sum_input >= 0) return p_->group == 1 && lay_.sum && lay_.out ? p_->sum_input : -1;
    return depthwise_in_place() ? 0 : -1;
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::Float32 || x.rank() != p_->w_dims.size())
      throw Error("fused Conv step " + ctx.step_name() + ": unsupported input " + x.str());
    std::vector<std::vector<int64_t>> operand_dims;
    for (int i = 1; i < ctx.num_inputs(); ++i) operand_dims.push_back(ctx.in(i).dims());
    if (x.dims() != src_dims_ || operand_dims != operand_dims_)
      build(x.dims(), operand_dims, ctx.threads());
    Tensor& y = ctx.output(0, DType::Float32, dst_dims_);
    if (y.numel() == 0) return;
    const Tensor* r = nullptr;
    if (p_->sum_input >= 0) {
      r = &ctx.in(p_->sum_input);
      if (r->dims() != y.dims())
        throw Error("fused Conv step " + ctx.step_name() + ": residual " + r->str() +
                    " does not match the output");
    }
    const int threads = ctx.threads();
    if (path_->converts_layouts()) {
      path_->run({ctx, lay_, x.raw(), r, y.raw(), false, threads, r_convert_});
      return;
    }
    // Tensors whose layout is not the path's own go through a buffer.
    const void* xin = x.raw();
    if (lay_.x != path_->reads_nhwc()) xin = x_convert_.into_buffer(x, threads);
    const bool out_nhwc = path_->writes_nhwc();
    void* out = lay_.out == out_nhwc ? y.raw() : scratch(ybuf_, y.numel());
    // The memory plan gave the output the input's memory (overwritable_input): written
    // in place where the path can, else from a copy of the input.
    bool in_place = false;
    if (out == xin) {
      in_place = !r && path_->can_run_in_place();
      if (!in_place) {
        float* copy = scratch(x_convert_.buffer, x.numel());
        std::memcpy(copy, xin, x.byte_size());
        xin = copy;
      }
    }
    if (candidate_) {
      // Timed on this first run's own tensors; the run below then writes the output.
      if (!r && !in_place) keep_faster({ctx, lay_, xin, r, out, false, threads, r_convert_});
      candidate_.reset();
    }
    path_->run({ctx, lay_, xin, r, out, in_place, threads, r_convert_});
    if (lay_.out != out_nhwc) y_convert_.run(out, y.raw(), threads);
  }

 private:
  // The path for these dims, in order of preference (conv_path.h), and the layout
  // conversions around it.
  void build(const std::vector<int64_t>& x, const OperandDims& operands, int threads) {
    const ConvPrep& p = *p_;
    ConvGeometry geo = conv_geometry(p, x);
    src_dims_ = x;
    operand_dims_ = operands;
    dst_dims_ = geo.out;
    path_.reset();
    x_convert_.clear();
    y_convert_.clear();
    r_convert_.clear();
    if (!(path_ = make_depthwise_conv_path(p, lay_, x, geo)) &&
        !(path_ = make_winograd_conv_path(p, lay_, x, geo, operands, threads)) &&
        !(path_ = make_nhwc_conv_path(p, lay_, x, geo, operands, threads)))
      path_ = make_plain_conv_path(p, x, geo, operands, threads);
    spdlog::debug(
        "fused Conv '{}': group {} x{} path {} reads {} writes {}; tensors x {} out {} sum {}",
        p.name, p.group, fmt::join(x, "x"), typeid(*path_).name(),
        path_->reads_nhwc() ? "NHWC" : "NCHW", path_->writes_nhwc() ? "NHWC" : "NCHW",
        lay_.x ? "NHWC" : "NCHW", lay_.out ? "NHWC" : "NCHW", lay_.sum ? "NHWC" : "NCHW");
    candidate_.reset();
    if (auto c = make_split_candidate(p, x, geo, operands, threads, *path_);
        c && !path_->converts_layouts() && c->reads_nhwc() == path_->reads_nhwc() &&
        c->writes_nhwc() == path_->writes_nhwc()) {
      // FX_CONV_SPLIT=split or =one decides without timing (comparisons, tests).
      const char* force = std::getenv("FX_CONV_SPLIT");
      const std::string how = force ? force : "";
      if (how == "split")
        path_ = std::move(c);
      else if (how != "one")
        candidate_ = std::move(c);
    }
    if (path_->converts_layouts()) return;
    const bool native = path_->reads_nhwc();
    if (lay_.x != native) x_convert_.build(x, !lay_.x, threads);
    if (lay_.out != path_->writes_nhwc()) y_convert_.build(geo.out, lay_.out, threads);
    if (p.sum_input >= 0 && lay_.sum != native) r_convert_.build(geo.out, !lay_.sum, threads);
  }

  // Runs the chosen path and the candidate alternately (each's best of a few runs, so
  // that a descheduled run does not decide) and keeps the faster.
  void keep_faster(const ConvRunArgs& a) {
    using clock = std::chrono::steady_clock;
    ConvPath* paths[2] = {path_.get(), candidate_.get()};
    double best[2] = {std::numeric_limits<double>::infinity(),
                      std::numeric_limits<double>::infinity()};
    for (int rep = 0; rep < 6; ++rep) {
      // Each goes first in half the rounds: the second finds the input in cache.
      for (int k = 0; k < 2; ++k) {
        const int i = (rep + k) % 2;
        const auto t0 = clock::now();
        paths[i]->run(a);
        best[i] =
            std::min(best[i], std::chrono::duration<double, std::micro>(clock::now() - t0).count());
      }
    }
    spdlog::debug("fused Conv '{}': one part {:.1f} us, {} threads' parts {:.1f} us", p_->name,
                  best[0], a.threads, best[1]);
    if (best[1] < best[0]) path_ = std::move(candidate_);
  }

  // A depthwise convolution (with our epilogue: no Binary post-op) whose input and
  // output are both NHWC, square odd kernel, stride 1, no dilation, explicit "same"
  // padding: the shapes DepthwiseNhwc::run_in_place takes (one image is checked at run
  // time). Only on inputs of 1 MiB or more: MobileNetV2's 112x112x32 and 56x56x144
  // depthwise steps ran 10-45% faster in place (and their consumers, reading memory just
  // written, too), its 28x28 and smaller ones 10-50% slower (the ring's row copies cost
  // more than the memory they save there).
  bool depthwise_in_place() const {
    const ConvPrep& p = *p_;
    if (p.x_bytes < (int64_t{1} << 20)) return false;
    if (!p.epilogue || !lay_.x || !lay_.out || p.group <= 1 || p.w_dims.size() != 4 ||
        p.w_dims[0] != p.group || p.w_dims[1] != 1 || p.auto_pad != "NOTSET")
      return false;
    const int64_t k = p.w_dims[2];
    if (p.w_dims[3] != k || k % 2 == 0) return false;
    auto all = [](const std::vector<int64_t>& v, int64_t x) {
      return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
    };
    return all(p.strides, 1) && all(p.dilations, 1) && p.pads.size() == 4 &&
           all(p.pads, (k - 1) / 2);
  }

  std::shared_ptr<const ConvPrep> p_;
  ConvLayouts lay_;
  std::unique_ptr<ConvPath> path_;
  // Another way to run path_'s work (make_split_candidate), timed against it on the
  // first run with these dims.
  std::unique_ptr<ConvPath> candidate_;
  std::vector<int64_t> src_dims_, dst_dims_;
  OperandDims operand_dims_;
  // Layout conversions where a tensor's layout is not the path's (the x conversion's
  // buffer also holds the input's copy when it may not be written over).
  LayoutConversion x_convert_, y_convert_, r_convert_;
  std::vector<float> ybuf_;
};

}  // namespace

std::shared_ptr<Kernel> make_fused_conv_kernel(const Graph& g, const ConvPostOpPlan& plan) {
  return std::make_shared<FusedConvKernel>(prepare_conv(g, plan), ConvLayouts{});
}

std::shared_ptr<Kernel> make_fused_conv_kernel(std::shared_ptr<const ConvPrep> prep,
                                               ConvLayouts layouts) {
  return std::make_shared<FusedConvKernel>(std::move(prep), layouts);
}

std::shared_ptr<const ConvPrep> fused_conv_prep(const Kernel* k, ConvLayouts* layouts) {
  auto* f = dynamic_cast<const FusedConvKernel*>(k);
  if (!f) return nullptr;
  if (layouts) *layouts = f->layouts();
  return f->shared_prep();
}

}  // namespace fx
