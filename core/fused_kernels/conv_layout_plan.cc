// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/conv_layout_plan.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "analysis/op_kind.h"
#include "fused_kernels/conv_layout_costs.h"
#include "fused_kernels/conv_prep.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "fused_kernels/nhwc_batch_norm.h"
#include "fused_kernels/nhwc_channel_ops.h"
#include "fused_kernels/nhwc_concat.h"
#include "fused_kernels/nhwc_max_pool.h"
#include "fused_kernels/pointwise_depthwise_kernel.h"
#include "fused_kernels/pool_pad_fold.h"
#include "fused_kernels/qdq_int8_kernel.h"
#include "runtime/kernel_registry.h"
#include "util/error.h"

namespace fx {

namespace {

// Per step, what it is to the plan (at most one of a fused Conv's prep, a MaxPool's
// geometry, a pointwise+depthwise kernel's prep) and its inputs as such a kernel reads
// them.
struct Candidates {
  std::vector<std::shared_ptr<const ConvPrep>> prep;
  std::vector<std::optional<PoolGeometry>> pool;
  // Pointwise+depthwise kernels (pointwise_depthwise_kernel.h): NHWC in and out like a
  // fused Conv without a residual.
  std::vector<std::shared_ptr<const PointwiseDepthwisePrep>> pwdw;
  // Concats over channels (nhwc_concat.h): every input and the output NHWC together.
  std::vector<bool> concat;
  // Elementwise steps (layout_transparent): their own kernel on either layout; the
  // inputs listed and the output NHWC together.
  std::vector<std::optional<std::vector<std::size_t>>> transparent;
  // GlobalAveragePools (nhwc_channel_ops.h): read NHWC when their input is; the
  // [N, C, 1, 1] output is the same memory either way.
  std::vector<bool> global_pool;
  // Muls by a per-channel scale (nhwc_channel_ops.h): the full-size input's index; its
  // NHWC kernel replaces the step's, and `transparent` joins that input and the output.
  std::vector<std::optional<int>> scale;
  // QDQ int8 2-D Convs (qdq_int8_kernel.h): x and output NHWC each or not; oneDNN runs
  // them on NHWC either way, so every tensor of theirs kept NHWC spares a reorder.
  std::vector<bool> int8conv;
  std::vector<std::vector<ValueId>> inputs;
};

// A step whose nodes are all elementwise (with or without broadcasting, by op type),
// whose one float32 output has a static shape, and whose inputs each have that shape
// or hold one element: its kernel computes each output element from the same-index
// elements (or the scalars), so it runs unchanged on NHWC memory. Returns the indices
// of its full-shape inputs, which must share the output's layout; nullopt otherwise.
// A per-channel operand (BatchNormalization's, a [C,1,1] Mul) broadcasts along C and
// does not qualify.
std::optional<std::vector<std::size_t>> layout_transparent(const Graph& g, const Step& s) {
  if (s.outputs.size() != 1 || s.nodes.empty() || s.inputs.empty()) return std::nullopt;
  for (NodeId id : s.nodes) {
    const Node& n = g.node(id);
    const OpClass k = classify_op(n.domain, n.op_type);
    if (!k.known || (k.kind != OpKind::Elementwise && k.kind != OpKind::Broadcast) ||
        n.op_type == "BatchNormalization" || n.op_type == "Cast" || n.op_type == "CastLike")
      return std::nullopt;
  }
  const Value& out = g.value(s.outputs[0]);
  if (out.dtype != DType::Float32 || !out.shape.is_static() || out.shape.rank() != 4)
    return std::nullopt;
  std::vector<std::size_t> full;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    if (s.inputs[i] == kNoValue) continue;
    const Value& v = g.value(s.inputs[i]);
    if (v.shape == out.shape && v.dtype == DType::Float32) {
      full.push_back(i);
      continue;
    }
    const auto numel = v.shape.numel();
    if (!numel || *numel != 1) return std::nullopt;
  }
  if (full.empty()) return std::nullopt;
  return full;
}

// The steps that can exchange NHWC tensors: fused Conv kernels, lone Conv nodes (no
// epilogue to fuse, e.g. MobileNetV2's projections) adopted as fused Conv kernels
// without post-ops so that they do not break a chain of NHWC tensors, and MaxPool nodes
// whose input and output can both stay NHWC, channel Concats whose inputs and output
// can all stay NHWC, elementwise steps (a lone Relu, a generated Add+Relu) and Muls by a
// per-channel scale whose full-shape inputs and output can, and GlobalAveragePools.
Candidates find_candidates(const Graph& g, const std::vector<Step>& steps) {
  Candidates c;
  c.prep.resize(steps.size());
  c.pool.resize(steps.size());
  c.pwdw.resize(steps.size());
  c.inputs.resize(steps.size());
  c.concat.resize(steps.size());
  c.transparent.resize(steps.size());
  c.global_pool.resize(steps.size());
  c.scale.resize(steps.size());
  c.int8conv.resize(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    c.inputs[i] = s.inputs;
    if (s.outputs.size() != 1) continue;
    if (!std::getenv("FX_CONV_PLAIN")) {
      if (qdq_int8_conv_layouts(s.kernel.get(), nullptr, nullptr)) {
        c.int8conv[i] = true;
        continue;
      }
      if (is_qdq_int8_add_kernel(s.kernel.get())) {  // both operands have the output's shape
        c.transparent[i] = std::vector<std::size_t>{0, 1};
        continue;
      }
    }
    if (s.kernel && (c.pwdw[i] = shared_pointwise_depthwise_prep(*s.kernel))) {
      if (std::getenv("FX_CONV_PLAIN")) c.pwdw[i].reset();
      continue;
    }
    if (auto k = fused_conv_prep(s.kernel.get())) {
      c.prep[i] = std::move(k);
    } else if (s.nodes.size() == 1 && g.node(s.nodes[0]).op_type == "Conv") {
      auto cp = plan_conv_post_ops(g, s.nodes, nullptr);
      if (!cp) continue;
      try {
        c.prep[i] = prepare_conv(g, *cp);
      } catch (const Error&) {
        continue;
      }
      c.inputs[i] = cp->step_inputs;
    } else if (is_nhwc_concat_candidate(g, s) &&
               (is_nhwc_concat_kernel(s.kernel.get()) || !std::getenv("FX_CONV_PLAIN"))) {
      c.concat[i] = true;
    } else if (is_nhwc_max_pool_kernel(s.kernel.get()) || !std::getenv("FX_CONV_PLAIN")) {
      c.pool[i] = nhwc_max_pool_geometry(g, s);
    }
    const bool other = !c.prep[i] && !c.pool[i] && !c.concat[i] && !std::getenv("FX_CONV_PLAIN");
    if (other && is_nhwc_global_pool_candidate(g, s)) {
      c.global_pool[i] = true;
    } else if (other && is_nhwc_batch_norm_candidate(g, s)) {  // a scale and a shift
      c.scale[i] = 0;
      c.transparent[i] = std::vector<std::size_t>{0};
    } else if (other && (c.scale[i] = nhwc_channel_scale_input(g, s))) {
      c.transparent[i] = std::vector<std::size_t>{static_cast<std::size_t>(*c.scale[i])};
    } else if (other) {
      c.transparent[i] = layout_transparent(g, s);
    }
    if (c.prep[i] && !c.prep[i]->channels_last) c.prep[i].reset();
  }
  return c;
}

// A value may stay NHWC when such a step produces it and every reader is such a step
// that reads it as its x or its residual (the Sum operand). A MaxPool's input and output
// are NHWC together or not at all, and so are a Concat's inputs and output (until
// nothing changes; a MaxPool or Concat left out is dropped from `c`).
std::map<ValueId, bool> nhwc_values(const Graph& g, const std::vector<Step>& steps, Candidates& c) {
  std::set<ValueId> graph_outputs(g.outputs().begin(), g.outputs().end());
  std::map<ValueId, bool> nhwc;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if ((c.prep[i] || c.pool[i] || c.pwdw[i] || c.concat[i] || c.transparent[i] || c.int8conv[i]) &&
        !graph_outputs.count(steps[i].outputs[0]))
      nhwc[steps[i].outputs[0]] = true;
  for (std::size_t j = 0; j < steps.size(); ++j) {
    for (std::size_t i = 0; i < c.inputs[j].size(); ++i) {
      auto it = nhwc.find(c.inputs[j][i]);
      if (it == nhwc.end()) continue;
      const bool layout_input =
          (c.prep[j] && (i == 0 || static_cast<int>(i) == c.prep[j]->sum_input)) ||
          ((c.pool[j] || c.pwdw[j] || c.global_pool[j] || c.int8conv[j]) && i == 0) ||
          c.concat[j] ||
          (c.transparent[j] && std::count(c.transparent[j]->begin(), c.transparent[j]->end(), i));
      if (!layout_input) it->second = false;
    }
  }
  auto is = [&](ValueId v) {
    auto it = nhwc.find(v);
    return it != nhwc.end() && it->second;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (!c.pool[i] || (is(c.inputs[i][0]) && is(steps[i].outputs[0]))) continue;
      for (ValueId v : {c.inputs[i][0], steps[i].outputs[0]}) {
        auto it = nhwc.find(v);
        if (it != nhwc.end() && it->second) it->second = false, changed = true;
      }
      c.pool[i].reset();
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (!c.concat[i] && !c.transparent[i]) continue;
      std::vector<ValueId> joined{steps[i].outputs[0]};
      if (c.concat[i]) joined.insert(joined.end(), c.inputs[i].begin(), c.inputs[i].end());
      if (c.transparent[i])
        for (std::size_t k : *c.transparent[i]) joined.push_back(c.inputs[i][k]);
      if (std::all_of(joined.begin(), joined.end(), is)) continue;
      for (ValueId v : joined)
        if (auto it = nhwc.find(v); it != nhwc.end()) it->second = false;
      c.concat[i] = false;
      c.transparent[i].reset();
      c.scale[i].reset();
      changed = true;
    }
  }
  return nhwc;
}

// A step's tensors that the plan may keep NHWC: a Conv's x, residual and output, a
// pointwise+depthwise kernel's x and output, a MaxPool's, a Concat's or an elementwise
// step's joined inputs and output, a GlobalAveragePool's input.
std::vector<ValueId> layout_tensors(const std::vector<Step>& steps, const Candidates& c,
                                    std::size_t i) {
  std::vector<ValueId> t;
  const auto& in = c.inputs[i];
  if (c.prep[i]) {
    t = {in[0], steps[i].outputs[0]};
    if (c.prep[i]->sum_input >= 0) t.push_back(in[static_cast<std::size_t>(c.prep[i]->sum_input)]);
  } else if (c.pwdw[i] || c.pool[i] || c.int8conv[i]) {
    t = {in[0], steps[i].outputs[0]};
  } else if (c.concat[i]) {
    t = in;
    t.push_back(steps[i].outputs[0]);
  } else if (c.transparent[i]) {
    for (std::size_t k : *c.transparent[i]) t.push_back(in[k]);
    t.push_back(steps[i].outputs[0]);
  } else if (c.global_pool[i]) {
    t = {in[0]};
  }
  return t;
}

// The static [n, c, h, w] dims of a value, or empty.
std::vector<int64_t> dims4(const Graph& g, ValueId v) {
  const Shape& sh = g.value(v).shape;
  if (!sh.is_static() || sh.rank() != 4) return {};
  return sh.static_dims();
}

// The NHWC values joined through the steps that touch them (a Conv's input and output
// are one component: changing one's layout moves a conversion into the Conv). A
// component is kept only where it saves at least as many bytes of conversion as it
// adds: a spatial or grouped Conv (or pointwise+depthwise kernel) touching it saves
// the tensors of it that the kernel reads or writes (on NCHW such a kernel reorders
// them itself), while a 1x1 Conv touching it, on NCHW one GEMM either way, adds those
// of its own tensors left NCHW. So an island of NHWC between 1x1 Convs whose other
// sides stay NCHW (RegNet's block outputs between grouped Convs that oneDNN runs
// blocked) goes back to NCHW instead of converting twice per block. Steps that run on
// either layout (pools, Concats, elementwise steps) add nothing. A component with a
// tensor of unknown size is kept.
//
// A depthwise Conv on its own loops converts nothing on NCHW either: it only runs
// faster or slower. A component with one is weighed in time instead (`costs`,
// measured on this machine): the depthwise Convs' NCHW time, plus the conversions the
// other Convs above would run on NCHW, against their NHWC time plus the conversions
// the 1x1 Convs run; kept when NHWC is faster (ShuffleNetV2's branch, 1x1 -> 3x3
// depthwise -> 1x1 between NCHW channel shuffles, goes back to NCHW where the NHWC loop
// does not win back the two conversions). Dropped components take their pools,
// Concats and elementwise joins with them.
void drop_unprofitable_components(const Graph& g, const std::vector<Step>& steps, Candidates& c,
                                  std::map<ValueId, bool>& nhwc, const LayoutCosts& costs) {
  auto is = [&](ValueId v) {
    auto it = nhwc.find(v);
    return it != nhwc.end() && it->second;
  };
  std::map<ValueId, ValueId> parent;
  std::function<ValueId(ValueId)> root = [&](ValueId v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v) return v;
    return it->second = root(it->second);
  };
  std::vector<std::vector<ValueId>> tensors(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    tensors[i] = layout_tensors(steps, c, i);
    ValueId first = kNoValue;
    for (ValueId v : tensors[i]) {
      if (!is(v)) continue;
      if (first == kNoValue) {
        first = root(v);
        parent.emplace(first, first);
        continue;
      }
      const ValueId r = root(v);
      if (r != first) parent[r] = first;
    }
  }
  // Per Conv step touching a component: that component, and whether it is a depthwise
  // Conv on our loops (input dims known).
  std::vector<ValueId> comp_of(steps.size(), kNoValue);
  std::vector<bool> depthwise(steps.size(), false);
  std::set<ValueId> timed;  // components weighed in time
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!c.prep[i] && !c.pwdw[i] && !c.int8conv[i]) continue;
    for (ValueId v : tensors[i])
      if (is(v)) comp_of[i] = root(v);
    if (comp_of[i] == kNoValue || !c.prep[i]) continue;
    const auto x = dims4(g, c.inputs[i][0]);
    if (!x.empty() && runs_depthwise_path(*c.prep[i], x)) {
      depthwise[i] = true;
      timed.insert(comp_of[i]);
    }
  }
  std::map<ValueId, int64_t> saved, added;     // bytes, by component root
  std::map<ValueId, double> nchw_us, nhwc_us;  // timed components
  std::set<ValueId> unknown;                   // components with a tensor of unknown size
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ValueId comp = comp_of[i];
    if (comp == kNoValue) continue;
    const bool time = timed.count(comp) > 0;
    // Conversions of the step's tensors in the component (`in`) or out of it.
    int64_t in = 0, out = 0;
    double in_us = 0, out_us = 0;
    bool sized = true;
    for (ValueId v : tensors[i]) {
      const auto bytes = g.value(v).byte_size();
      sized = sized && bytes.has_value();
      const int64_t b = bytes ? static_cast<int64_t>(*bytes) : 0;
      const auto d = time ? dims4(g, v) : std::vector<int64_t>{};
      sized = sized && (!time || !d.empty());
      const double us = d.empty() ? 0 : costs.conversion_us(d);
      if (is(v)) {
        in += b;
        in_us += us;
      } else {
        out += b;
        out_us += us;
      }
    }
    if (!sized) unknown.insert(comp);
    if (!sized) continue;
    if (depthwise[i]) {
      // On NHWC the kernel converts its inputs left NCHW, and its output when a
      // residual makes it write NHWC (conv_path_depthwise.cc); its NCHW output is
      // written by the loop itself.
      const ConvPrep& p = *c.prep[i];
      const ValueId y = steps[i].outputs[0];
      const bool out_nhwc = is(y) || p.sum_input >= 0;
      const auto x = dims4(g, c.inputs[i][0]);
      nchw_us[comp] += costs.depthwise_us(p, x, false, false);
      nhwc_us[comp] += costs.depthwise_us(p, x, true, out_nhwc);
      for (ValueId v : tensors[i])
        if (!is(v) && (v != y || out_nhwc)) nhwc_us[comp] += costs.conversion_us(dims4(g, v));
      continue;
    }
    const bool native = c.pwdw[i] || c.int8conv[i] || c.prep[i]->group > 1 ||
                        std::any_of(c.prep[i]->w_dims.begin() + 2, c.prep[i]->w_dims.end(),
                                    [](int64_t k) { return k > 1; });
    if (native) {
      saved[comp] += in;
      nchw_us[comp] += in_us;
    } else {
      added[comp] += out;
      nhwc_us[comp] += out_us;
    }
  }
  for (ValueId r : timed)
    if (!unknown.count(r))
      spdlog::debug(
          "layout plan: NHWC values around '{}' with depthwise Convs: {:.1f} us NHWC, "
          "{:.1f} us NCHW (measured): {}",
          g.value(r).name, nhwc_us[r], nchw_us[r],
          nhwc_us[r] < nchw_us[r] ? "kept" : "back to NCHW");
  for (auto& [v, on] : nhwc) {
    if (!on) continue;
    const ValueId r = root(v);
    if (unknown.count(r)) continue;
    if (timed.count(r) ? nhwc_us[r] >= nchw_us[r] : added[r] > saved[r]) on = false;
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!c.pool[i] && !c.concat[i] && !c.transparent[i]) continue;
    if (std::all_of(tensors[i].begin(), tensors[i].end(), is)) continue;
    c.pool[i].reset();
    c.concat[i] = false;
    c.transparent[i].reset();
    c.scale[i].reset();
  }
}

// Each candidate step's kernel for the layouts of its tensors (kept where it has them).
void apply_layouts(const Graph& g, std::vector<Step>& steps, const Candidates& c,
                   const std::map<ValueId, bool>& nhwc) {
  auto is = [&](ValueId v) {
    auto it = nhwc.find(v);
    return it != nhwc.end() && it->second;
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
    if (c.pool[i]) {
      s.kernel = make_nhwc_max_pool_kernel(*c.pool[i]);
      continue;
    }
    if (c.concat[i]) {
      if (!is_nhwc_concat_kernel(s.kernel.get())) s.kernel = make_nhwc_concat_kernel();
      continue;
    }
    if (c.scale[i] && is_nhwc_batch_norm_candidate(g, s)) {
      if (!is_nhwc_batch_norm_kernel(s.kernel.get())) s.kernel = make_nhwc_batch_norm_kernel(g, s);
      continue;
    }
    if (c.scale[i]) {
      if (!is_nhwc_channel_scale_kernel(s.kernel.get()))
        s.kernel = make_nhwc_channel_scale_kernel(*c.scale[i]);
      continue;
    }
    if (c.global_pool[i] && is(c.inputs[i][0])) {
      if (!is_nhwc_global_pool_kernel(s.kernel.get())) s.kernel = make_nhwc_global_pool_kernel();
      continue;
    }
    if (c.int8conv[i]) {
      bool x_now = false, out_now = false;
      qdq_int8_conv_layouts(s.kernel.get(), &x_now, &out_now);
      const bool x = is(c.inputs[i][0]), out = is(s.outputs[0]);
      if (x != x_now || out != out_now) s.kernel = qdq_int8_conv_with_layouts(*s.kernel, x, out);
      continue;
    }
    // Planned before, not now (pool_pad_fold.h: a pool's runtime kernel).
    if (is_nhwc_max_pool_kernel(s.kernel.get()) || is_nhwc_concat_kernel(s.kernel.get()) ||
        is_nhwc_channel_scale_kernel(s.kernel.get()) ||
        is_nhwc_global_pool_kernel(s.kernel.get()) || is_nhwc_batch_norm_kernel(s.kernel.get()))
      s.kernel = make_runtime_step_kernel(g, s);
    if (c.pwdw[i]) {
      bool x_now = false, out_now = false;
      pointwise_depthwise_prep(*s.kernel, &x_now, &out_now);
      const bool x = is(c.inputs[i][0]), out = is(s.outputs[0]);
      if (x != x_now || out != out_now)
        s.kernel = make_pointwise_depthwise_kernel(c.pwdw[i], x, out);
      continue;
    }
    if (!c.prep[i]) continue;
    ConvLayouts lay;
    lay.x = is(c.inputs[i][0]);
    lay.sum = c.prep[i]->sum_input >= 0 &&
              is(c.inputs[i][static_cast<std::size_t>(c.prep[i]->sum_input)]);
    lay.out = is(s.outputs[0]);
    ConvLayouts now;
    if (fused_conv_prep(s.kernel.get(), &now) ? now == lay : !lay.x && !lay.sum && !lay.out)
      continue;
    s.kernel = make_fused_conv_kernel(c.prep[i], lay);
    s.inputs = c.inputs[i];
  }
}

}  // namespace

int plan_conv_layouts(const Graph& g, std::vector<Step>& steps, const LayoutCosts* costs) {
  Candidates c = find_candidates(g, steps);
  std::map<ValueId, bool> nhwc = nhwc_values(g, steps, c);
  drop_unprofitable_components(g, steps, c, nhwc, costs ? *costs : measured_layout_costs());
  int kept = 0;
  for (auto& [v, on] : nhwc) kept += on;
  apply_layouts(g, steps, c, nhwc);
  return kept;
}

}  // namespace fx
