// SPDX-License-Identifier: Apache-2.0
// Kernels of detection heads: TopK, NonMaxSuppression and RoiAlign. Their output
// sizes depend on data (K from an input, the boxes that survive suppression), which
// the executor's memory plan takes as it comes: a slot grows to what a run needs.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "runtime/fast_math.h"  // FX_VECTOR_CLONES
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

// ---- TopK -------------------------------------------------------------------

// The k largest (or smallest) entries of each row along `axis`, ties broken by the
// lower index first (the spec's rule). partial_sort is O(n log k) per row; rows
// run in parallel.
template <class T>
void topk_typed(const Tensor& x, int64_t axis, int64_t k, bool largest, Tensor& vals, Tensor& idx) {
  const auto& d = x.dims();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= d[i];
  for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < d.size(); ++i) inner *= d[i];
  const int64_t n = d[static_cast<std::size_t>(axis)];
  const T* in = x.data<T>();
  T* ov = vals.data<T>();
  int64_t* oi = idx.data<int64_t>();
  const int64_t rows = outer * inner;
  parallel_for(rows, n * 8, [&](int64_t b, int64_t e) {
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    std::vector<T> row(static_cast<std::size_t>(n));
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / inner, i = r % inner;
      const T* src = in + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) row[j] = src[j * inner];
      std::iota(order.begin(), order.end(), int64_t{0});
      auto before = [&](int64_t a, int64_t c) {
        if (row[a] != row[c]) return largest ? row[a] > row[c] : row[a] < row[c];
        return a < c;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      T* dv = ov + o * k * inner + i;
      int64_t* di = oi + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        dv[j * inner] = row[order[j]];
        di[j * inner] = order[j];
      }
    }
  });
}

// sorted = 0 allows any order; the sorted one is as good as any.
void topk(KernelContext& ctx, int64_t axis_attr, int64_t k_attr, bool largest) {
  const Tensor& x = ctx.in(0);
  int64_t k = k_attr;
  if (const Tensor* kt = ctx.input(1)) {
    auto v = ints_of(kt);
    if (v.size() != 1) throw Error("TopK: K must hold one value, got " + kt->str());
    k = v[0];
  }
  const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()));
  const int64_t n = x.dims()[static_cast<std::size_t>(axis)];
  if (k < 0 || k > n)
    throw Error("TopK: K = " + std::to_string(k) + " is outside [0, " + std::to_string(n) +
                "] for " + x.str());
  auto od = x.dims();
  od[static_cast<std::size_t>(axis)] = k;
  Tensor& vals = ctx.output(0, x.dtype(), od);
  Tensor& idx = ctx.output(1, DType::Int64, od);
  dispatch_numeric(x.dtype(), "TopK",
                   [&](auto tag) { topk_typed<decltype(tag)>(x, axis, k, largest, vals, idx); });
}

// ---- NonMaxSuppression ------------------------------------------------------

struct Box {
  float y1, x1, y2, x2;
};

// Box b of a [.., 4] float array as corners (min, max), from either encoding.
Box box_at(const float* p, bool center) {
  if (center) {
    const float xc = p[0], yc = p[1], w = p[2], h = p[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

// The boxes kept so far, one array per coordinate (and the area), so that one
// candidate is tested against all of them by a loop that vectorizes: with the
// batched-NMS export (every class offset to its own region) nearly every box
// survives, and the test against the kept ones is the whole cost of the op.
struct KeptBoxes {
  std::vector<float> y1, x1, y2, x2, area;
  std::size_t size() const { return y1.size(); }
  void clear() {
    for (auto* v : {&y1, &x1, &y2, &x2, &area}) v->clear();
  }
  void push(const Box& b) {
    y1.push_back(b.y1);
    x1.push_back(b.x1);
    y2.push_back(b.y2);
    x2.push_back(b.x2);
    area.push_back((b.y2 - b.y1) * (b.x2 - b.x1));
  }
};

// Whether any of kept[begin, end) overlaps `c` by an IoU above `thr`. IoU is 0 for
// boxes that do not intersect or have no union, so a negative threshold
// suppresses by any kept box. No early exit inside: the caller walks the
// kept boxes in blocks and stops at the first block that suppresses.
FX_VECTOR_CLONES bool overlaps_any(const KeptBoxes& k, std::size_t begin, std::size_t end,
                                   const Box& c, float c_area, float thr) {
  const float* ky1 = k.y1.data();
  const float* kx1 = k.x1.data();
  const float* ky2 = k.y2.data();
  const float* kx2 = k.x2.data();
  const float* ka = k.area.data();
  int hit = 0;
  for (std::size_t j = begin; j < end; ++j) {
    const float ih = std::min(c.y2, ky2[j]) - std::max(c.y1, ky1[j]);
    const float iw = std::min(c.x2, kx2[j]) - std::max(c.x1, kx1[j]);
    const float inter = ih * iw;
    const float uni = c_area + ka[j] - inter;
    const bool meets = ih > 0 && iw > 0 && uni > 0;
    const float iou = meets ? inter / uni : 0.0f;
    hit |= iou > thr;
  }
  return hit != 0;
}

bool any_suppresses(const KeptBoxes& k, const Box& c, float c_area, float thr) {
  constexpr std::size_t kBlock = 256;  // small enough that a hit stops the scan early
  for (std::size_t b = 0; b < k.size(); b += kBlock)
    if (overlaps_any(k, b, std::min(k.size(), b + kBlock), c, c_area, thr)) return true;
  return false;
}

// The kept boxes of one class, binned by the x of their centre into columns wider
// than any candidate: two boxes that intersect have centres closer than the widest
// box, so a candidate needs testing only against its own column and the two beside
// it. Batched NMS (one class, each real class shifted to its own region) keeps
// thousands of boxes that no candidate outside their region can touch. A negative
// threshold (any kept box suppresses), a single column, or coordinates that are not
// finite fall back to one column, which is the plain all-pairs test.
class KeptGrid {
 public:
  void reset(const float* boxes, const std::vector<int64_t>& order, bool center, float thr) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo, widest = 0.0f;
    bool finite = thr >= 0.0f;
    for (int64_t i : order) {
      const Box b = box_at(boxes + i * 4, center);
      const float xc = (b.x1 + b.x2) * 0.5f, w = b.x2 - b.x1;
      finite = finite && std::isfinite(xc) && std::isfinite(w);
      lo = std::min(lo, xc);
      hi = std::max(hi, xc);
      widest = std::max(widest, w);
    }
    // 1.5x the widest box: rounding in the centres and the division cannot move two
    // intersecting boxes two columns apart.
    const float col_w = widest * 1.5f;
    std::size_t cols = 1;
    if (finite && !order.empty() && col_w > 0.0f && std::isfinite((hi - lo) / col_w)) {
      const double want = std::floor(static_cast<double>(hi - lo) / col_w) + 1.0;
      cols = static_cast<std::size_t>(std::min(want, static_cast<double>(order.size())));
    }
    x0_ = lo;
    inv_w_ = cols > 1 ? 1.0f / col_w : 0.0f;
    if (cols_.size() < cols) cols_.resize(cols);
    for (std::size_t c = 0; c < cols; ++c) cols_[c].clear();
    used_ = cols;
    count_ = 0;
  }
  std::size_t size() const { return count_; }
  bool suppressed(const Box& c, float thr) const {
    const float c_area = (c.y2 - c.y1) * (c.x2 - c.x1);
    const std::size_t col = column(c);
    for (std::size_t k = col > 0 ? col - 1 : 0; k <= std::min(col + 1, used_ - 1); ++k)
      if (any_suppresses(cols_[k], c, c_area, thr)) return true;
    return false;
  }
  void push(const Box& b) {
    cols_[column(b)].push(b);
    ++count_;
  }

 private:
  std::size_t column(const Box& b) const {
    if (used_ == 1) return 0;
    const float t = ((b.x1 + b.x2) * 0.5f - x0_) * inv_w_;
    if (!(t > 0.0f)) return 0;
    return std::min(static_cast<std::size_t>(t), used_ - 1);
  }
  std::vector<KeptBoxes> cols_;
  std::size_t used_ = 1, count_ = 0;
  float x0_ = 0.0f, inv_w_ = 0.0f;
};

float scalar_float(const Tensor* t, float def, const char* what) {
  if (!t || t->numel() == 0) return def;
  if (t->numel() != 1) throw Error(std::string("NonMaxSuppression: ") + what + " must be a scalar");
  return t->to_floats()[0];
}

void nms(KernelContext& ctx, bool center) {
  const Tensor& boxes = ctx.in(0);
  const Tensor& scores = ctx.in(1);
  if (boxes.rank() != 3 || boxes.dims()[2] != 4 || boxes.dtype() != DType::Float32)
    throw Error("NonMaxSuppression: boxes must be float32 [batch, boxes, 4], got " + boxes.str());
  if (scores.rank() != 3 || scores.dims()[0] != boxes.dims()[0] ||
      scores.dims()[2] != boxes.dims()[1] || scores.dtype() != DType::Float32)
    throw Error("NonMaxSuppression: scores " + scores.str() + " do not match boxes " + boxes.str() +
                " (float32 [batch, classes, boxes])");
  int64_t max_out = 0;
  if (const Tensor* m = ctx.input(2); m && m->numel() > 0) max_out = ints_of(m).at(0);
  const float iou_thr = scalar_float(ctx.input(3), 0.0f, "iou_threshold");
  const Tensor* st = ctx.input(4);
  const bool use_score_thr = st && st->numel() > 0;
  const float score_thr = scalar_float(st, 0.0f, "score_threshold");
  const int64_t nb = boxes.dims()[0], nc = scores.dims()[1], n = boxes.dims()[1];

  std::vector<int64_t> selected;  // triples
  std::vector<int64_t> order;
  KeptGrid kept;
  for (int64_t b = 0; b < nb && max_out > 0; ++b) {
    const float* bp = boxes.data<float>() + b * n * 4;
    for (int64_t c = 0; c < nc; ++c) {
      const float* sp = scores.data<float>() + (b * nc + c) * n;
      order.clear();
      for (int64_t i = 0; i < n; ++i)
        if (!use_score_thr || sp[i] > score_thr) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t d) { return sp[a] > sp[d]; });
      kept.reset(bp, order, center, iou_thr);
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        const Box cand = box_at(bp + i * 4, center);
        if (kept.suppressed(cand, iou_thr)) continue;
        kept.push(cand);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  const int64_t count = static_cast<int64_t>(selected.size() / 3);
  Tensor& y = ctx.output(0, DType::Int64, {count, 3});
  std::copy(selected.begin(), selected.end(), y.data<int64_t>());
}

// ---- RoiAlign ----------------------------------------------------------------

struct RoiAttrs {
  bool max_mode = false;
  int64_t out_h = 1, out_w = 1, sampling = 0;
  float scale = 1.0f;
  bool half_pixel = true;
};

// One bilinear sample: four source offsets (within a plane) and their weights.
struct Sample {
  int64_t o[4] = {0, 0, 0, 0};
  float w[4] = {0, 0, 0, 0};
};

// The samples of each output cell, as ONNX's reference and ONNX Runtime place them.
std::vector<Sample> roi_samples(const RoiAttrs& a, const float* roi, int64_t height, int64_t width,
                                int64_t& grid_h, int64_t& grid_w) {
  const float off = a.half_pixel ? 0.5f : 0.0f;
  const float x0 = roi[0] * a.scale - off, y0 = roi[1] * a.scale - off;
  float rw = roi[2] * a.scale - off - x0, rh = roi[3] * a.scale - off - y0;
  if (!a.half_pixel) {
    rw = std::max(rw, 1.0f);
    rh = std::max(rh, 1.0f);
  }
  const float bh = rh / static_cast<float>(a.out_h), bw = rw / static_cast<float>(a.out_w);
  grid_h = a.sampling > 0 ? a.sampling : static_cast<int64_t>(std::ceil(rh / a.out_h));
  grid_w = a.sampling > 0 ? a.sampling : static_cast<int64_t>(std::ceil(rw / a.out_w));
  std::vector<Sample> s;
  s.reserve(static_cast<std::size_t>(a.out_h * a.out_w * grid_h * grid_w));
  for (int64_t ph = 0; ph < a.out_h; ++ph)
    for (int64_t pw = 0; pw < a.out_w; ++pw)
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        float y = y0 + ph * bh + (iy + 0.5f) * bh / static_cast<float>(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          float x = x0 + pw * bw + (ix + 0.5f) * bw / static_cast<float>(grid_w);
          Sample smp;
          if (y < -1.0f || y > height || x < -1.0f || x > width) {
            s.push_back(smp);
            continue;
          }
          y = std::max(y, 0.0f);
          x = std::max(x, 0.0f);
          int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh, xh;
          if (yl >= height - 1) {
            yh = yl = height - 1;
            y = static_cast<float>(yl);
          } else {
            yh = yl + 1;
          }
          if (xl >= width - 1) {
            xh = xl = width - 1;
            x = static_cast<float>(xl);
          } else {
            xh = xl + 1;
          }
          const float ly = y - yl, lx = x - xl, hy = 1 - ly, hx = 1 - lx;
          smp.o[0] = yl * width + xl;
          smp.o[1] = yl * width + xh;
          smp.o[2] = yh * width + xl;
          smp.o[3] = yh * width + xh;
          smp.w[0] = hy * hx;
          smp.w[1] = hy * lx;
          smp.w[2] = ly * hx;
          smp.w[3] = ly * lx;
          s.push_back(smp);
        }
      }
  return s;
}

void roi_align(KernelContext& ctx, const RoiAttrs& a) {
  const Tensor& x = ctx.in(0);
  const Tensor& rois = ctx.in(1);
  const Tensor& bi = ctx.in(2);
  if (x.rank() != 4 || x.dtype() != DType::Float32)
    throw Error("RoiAlign: X must be float32 [N, C, H, W], got " + x.str());
  if (rois.rank() != 2 || rois.dims()[1] != 4 || rois.dtype() != DType::Float32)
    throw Error("RoiAlign: rois must be float32 [num_rois, 4], got " + rois.str());
  const int64_t nr = rois.dims()[0];
  const auto batch_of = bi.to_int64s();
  if (static_cast<int64_t>(batch_of.size()) != nr)
    throw Error("RoiAlign: batch_indices " + bi.str() + " do not match rois " + rois.str());
  for (int64_t n : batch_of)
    if (n < 0 || n >= x.dims()[0])
      throw Error("RoiAlign: batch index " + std::to_string(n) + " outside " + x.str());
  const int64_t ch = x.dims()[1], height = x.dims()[2], width = x.dims()[3];
  Tensor& y = ctx.output(0, DType::Float32, {nr, ch, a.out_h, a.out_w});
  const float* rp = rois.data<float>();
  float* out = y.data<float>();
  const int64_t cells = a.out_h * a.out_w;
  parallel_for(nr, ch * cells * 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = batch_of[static_cast<std::size_t>(r)];
      int64_t gh = 0, gw = 0;
      const auto samples = roi_samples(a, rp + r * 4, height, width, gh, gw);
      const int64_t per_cell = gh * gw;
      const float count = static_cast<float>(std::max<int64_t>(per_cell, 1));
      for (int64_t c = 0; c < ch; ++c) {
        const float* plane = x.data<float>() + (n * ch + c) * height * width;
        float* dst = out + (r * ch + c) * cells;
        for (int64_t cell = 0; cell < cells; ++cell) {
          const Sample* sp = samples.data() + cell * per_cell;
          float acc = 0.0f;
          for (int64_t i = 0; i < per_cell; ++i) {
            const Sample& s = sp[i];
            if (a.max_mode) {
              const float v = std::max(std::max(s.w[0] * plane[s.o[0]], s.w[1] * plane[s.o[1]]),
                                       std::max(s.w[2] * plane[s.o[2]], s.w[3] * plane[s.o[3]]));
              acc = i == 0 ? v : std::max(acc, v);
            } else {
              acc += s.w[0] * plane[s.o[0]] + s.w[1] * plane[s.o[1]] + s.w[2] * plane[s.o[2]] +
                     s.w[3] * plane[s.o[3]];
            }
          }
          dst[cell] = a.max_mode ? acc : acc / count;
        }
      }
    }
  });
}

KernelFactory roi_align_factory(bool half_pixel_default) {
  return [half_pixel_default](const Graph&, const Node& n) {
    RoiAttrs a;
    const std::string mode = n.attrs.get_string("mode", "avg");
    if (mode != "avg" && mode != "max") throw Error("mode must be avg or max, got '" + mode + "'");
    a.max_mode = mode == "max";
    a.out_h = n.attrs.get_int("output_height", 1);
    a.out_w = n.attrs.get_int("output_width", 1);
    a.sampling = n.attrs.get_int("sampling_ratio", 0);
    a.scale = n.attrs.get_float("spatial_scale", 1.0f);
    const std::string ct = n.attrs.get_string(
        "coordinate_transformation_mode", half_pixel_default ? "half_pixel" : "output_half_pixel");
    if (ct != "half_pixel" && ct != "output_half_pixel")
      throw Error("unknown coordinate_transformation_mode '" + ct + "'");
    a.half_pixel = ct == "half_pixel";
    if (a.out_h <= 0 || a.out_w <= 0) throw Error("output_height/width must be positive");
    return fn_kernel([a](KernelContext& c) { roi_align(c, a); });
  };
}

}  // namespace

void register_detection_kernels(KernelTable& t) {
  t["TopK"] = [](const Graph&, const Node& n) {
    const int64_t axis = n.attrs.get_int("axis", -1), k = n.attrs.get_int("k", -1);
    const bool largest = n.attrs.get_int("largest", 1) != 0;
    if (n.inputs.size() < 2 && k < 0) throw Error("TopK needs K (an input, or the attribute k)");
    return fn_kernel([=](KernelContext& c) { topk(c, axis, k, largest); });
  };
  t["NonMaxSuppression"] = [](const Graph&, const Node& n) {
    const bool center = n.attrs.get_int("center_point_box", 0) != 0;
    return fn_kernel([center](KernelContext& c) { nms(c, center); });
  };
  t["RoiAlign"] = roi_align_factory(true);
  // Before opset 16 the only mode was what opset 16 calls output_half_pixel.
  t[std::string("RoiAlign") + kLegacyOpsetSuffix] = roi_align_factory(false);
}

}  // namespace fx
