// SPDX-License-Identifier: Apache-2.0
// RNN, GRU and LSTM (ONNX opset 7..14 semantics, float32): every direction,
// sequence_lens, initial states, peepholes, clip, input_forget, both layouts and
// the activation functions of the spec.
//
// The cost of a recurrent layer is in two products, and both go to tuned code: the
// input projection of every time step at once (one sgemm, [seq*batch, I] x W^T),
// and the recurrent product of each step (a gemv for batch 1, the usual case in
// streaming speech models, else an sgemm). What is left per step is
// O(gates * hidden) of elementwise work. With several threads, each owns a slice of
// the hidden units for the whole sequence and the steps go in lockstep
// (runtime/lockstep.h).
//
// LSTM and GRU layers that oneDNN's RNN primitives fit (runtime/recurrent_dnnl.h:
// constant weights, default activations, no clip, input_forget or per-batch sequence
// lengths, layout 0) can run there instead; which of the two runs is measured on the
// machine (runtime/recurrent_path.h), since oneDNN's per-step OpenMP barrier wins or
// loses with the machine's wait policy and load. RNN cells always run here: oneDNN's
// vanilla cell would fit those with one Tanh, Relu or Sigmoid, but no corpus model has
// an RNN node to measure it on, so it is not wired up.

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <variant>

#include "runtime/fast_math.h"
#include "runtime/gemv.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/lockstep.h"
#include "runtime/recurrent_dnnl.h"
#include "runtime/recurrent_path.h"
#include "runtime/thread_pool.h"

namespace fx {
namespace {

enum class Cell { Rnn, Gru, Lstm };

int gate_count(Cell c) {
  return c == Cell::Lstm ? 4 : c == Cell::Gru ? 3 : 1;
}
// Activation functions per direction: f (RNN); f, g (GRU); f, g, h (LSTM).
int activation_count(Cell c) {
  return c == Cell::Lstm ? 3 : c == Cell::Gru ? 2 : 1;
}
const char* cell_name(Cell c) {
  return c == Cell::Lstm ? "LSTM" : c == Cell::Gru ? "GRU" : "RNN";
}

enum class Act {
  Sigmoid,
  Tanh,
  Relu,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct Activation {
  Act kind = Act::Sigmoid;
  float alpha = 0, beta = 0;

  FX_VECTOR_CLONES void apply(float* x, int64_t n) const {
    switch (kind) {
      case Act::Sigmoid:
        for (int64_t i = 0; i < n; ++i) x[i] = fast_sigmoid(x[i]);
        break;
      case Act::Tanh:
        for (int64_t i = 0; i < n; ++i) x[i] = fast_tanh(x[i]);
        break;
      case Act::Relu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : 0.0f;
        break;
      case Act::Affine:
        for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
        break;
      case Act::LeakyRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * x[i];
        break;
      case Act::ThresholdedRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : 0.0f;
        break;
      case Act::ScaledTanh:
        for (int64_t i = 0; i < n; ++i) x[i] = alpha * fast_tanh(beta * x[i]);
        break;
      case Act::HardSigmoid:
        for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(alpha * x[i] + beta, 0.0f, 1.0f);
        break;
      case Act::Elu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * (fast_exp(x[i]) - 1);
        break;
      case Act::Softsign:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1 + std::abs(x[i]));
        break;
      case Act::Softplus:
        for (int64_t i = 0; i < n; ++i) x[i] = std::log1p(std::exp(x[i]));
        break;
    }
  }
};

// The activation named `name` (case-insensitive), taking its alpha/beta from the
// lists in order (`ai`, `bi` advance) or the spec's defaults when the lists run out.
Activation parse_activation(std::string name, const std::vector<float>& alphas,
                            const std::vector<float>& betas, std::size_t& ai, std::size_t& bi) {
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  struct Known {
    const char* name;
    Act kind;
    bool uses_alpha, uses_beta;
    float alpha, beta;
  };
  static const Known known[] = {
      {"sigmoid", Act::Sigmoid, false, false, 0, 0},
      {"tanh", Act::Tanh, false, false, 0, 0},
      {"relu", Act::Relu, false, false, 0, 0},
      {"affine", Act::Affine, true, true, 1.0f, 0.0f},
      {"leakyrelu", Act::LeakyRelu, true, false, 0.01f, 0},
      {"thresholdedrelu", Act::ThresholdedRelu, true, false, 1.0f, 0},
      {"scaledtanh", Act::ScaledTanh, true, true, 1.0f, 1.0f},
      {"hardsigmoid", Act::HardSigmoid, true, true, 0.2f, 0.5f},
      {"elu", Act::Elu, true, false, 1.0f, 0},
      {"softsign", Act::Softsign, false, false, 0, 0},
      {"softplus", Act::Softplus, false, false, 0, 0},
  };
  for (const Known& k : known) {
    if (name != k.name) continue;
    Activation a{k.kind, k.alpha, k.beta};
    if (k.uses_alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (k.uses_beta && bi < betas.size()) a.beta = betas[bi++];
    return a;
  }
  throw Error("unknown activation '" + name + "'");
}

struct Spec {
  Cell cell = Cell::Lstm;
  int64_t hidden = 0;
  int dirs = 1;
  bool reverse = false;  // direction == "reverse" (one direction, run backwards)
  int layout = 0;        // 0: [seq, batch, ...]; 1: [batch, seq, ...]
  float clip = 0;        // 0: none
  bool input_forget = false;
  bool linear_before_reset = false;
  std::vector<Activation> acts;  // activation_count(cell) per direction
  bool has_out[3] = {false, false, false};
};

Spec parse_spec(Cell cell, const Node& n) {
  Spec s;
  s.cell = cell;
  s.hidden = n.attrs.get_int("hidden_size", 0);
  const std::string dir = n.attrs.get_string("direction", "forward");
  if (dir == "bidirectional")
    s.dirs = 2;
  else if (dir == "reverse")
    s.reverse = true;
  else if (dir != "forward")
    throw Error("direction must be forward, reverse or bidirectional, got '" + dir + "'");
  s.layout = static_cast<int>(n.attrs.get_int("layout", 0));
  if (s.layout != 0 && s.layout != 1)
    throw Error("layout must be 0 or 1, got " + std::to_string(s.layout));
  s.clip = n.attrs.get_float("clip", 0.0f);
  if (s.clip < 0) throw Error("clip must be positive");
  s.input_forget = n.attrs.get_int("input_forget", 0) != 0;
  s.linear_before_reset = n.attrs.get_int("linear_before_reset", 0) != 0;

  std::vector<std::string> names;
  if (const AttributeValue* v = n.attrs.find("activations")) {
    if (const auto* l = std::get_if<std::vector<std::string>>(v)) names = *l;
    if (const auto* one = std::get_if<std::string>(v)) names = {*one};
  }
  const std::size_t per = static_cast<std::size_t>(activation_count(cell));
  if (names.empty()) {
    names = cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
            : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  }
  if (names.size() == per && s.dirs == 2) {
    const std::vector<std::string> once = names;
    names.insert(names.end(), once.begin(), once.end());
  }
  if (names.size() != per * static_cast<std::size_t>(s.dirs))
    throw Error("expected " + std::to_string(per * s.dirs) + " activations, got " +
                std::to_string(names.size()));
  const auto alphas = n.attrs.get_floats("activation_alpha");
  const auto betas = n.attrs.get_floats("activation_beta");
  std::size_t ai = 0, bi = 0;
  for (const auto& name : names) s.acts.push_back(parse_activation(name, alphas, betas, ai, bi));
  for (std::size_t i = 0; i < 3 && i < n.outputs.size(); ++i)
    s.has_out[i] = n.outputs[i] != kNoValue;
  return s;
}

void sgemm_nt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta,
              float* c) {
  // c[m, n] = a[m, k] * b[n, k]^T (+ beta * c), row-major.
  if (dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, k, b, k, beta, c, n) != dnnl_success)
    throw Error("sgemm failed");
}

// The input projection of every step at once, c[m, n] = a[m, k] * b[n, k]^T, its rows
// split over the pool when each part keeps at least kMinProjectionWork multiply-adds
// (waking a worker costs about as much); each part is one single-threaded sgemm.
constexpr int64_t kMinProjectionWork = int64_t{1} << 20;

void project(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
             int threads) {
  const int64_t by_work = m * n * k / kMinProjectionWork;
  const int parts =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({threads, m, by_work})));
  if (parts <= 1) {
    sgemm_nt(m, n, k, a, b, 0.0f, c);
    return;
  }
  std::atomic<bool> failed{false};
  pool_run(parts, parts, [&](int64_t p) {
    const int64_t m0 = m * p / parts, m1 = m * (p + 1) / parts;
    if (m1 > m0 && dnnl_sgemm('N', 'T', m1 - m0, n, k, 1.0f, a + m0 * k, k, b, k, 0.0f, c + m0 * n,
                              n) != dnnl_success)
      failed = true;
  });
  if (failed) throw Error("sgemm failed");
}

// rows [0, n) of w ([n, k]) times each of the m rows of x ([m, k]) into y ([m, ldy]).
void rows_times(const float* x, const float* w, int64_t m, int64_t n, int64_t k, float* y,
                int64_t ldy) {
  if (m == 1) {
    gemv_rows(x, w, nullptr, 1.0f, n, k, y);
  } else if (dnnl_sgemm('N', 'T', m, n, k, 1.0f, x, k, w, k, 0.0f, y, ldy) != dnnl_success) {
    throw Error("sgemm failed");
  }
}

void clip_to(float* x, int64_t n, float clip) {
  if (clip <= 0) return;
  for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -clip, clip);
}

void expect_dims(const Tensor& t, const std::vector<int64_t>& dims, const char* what) {
  if (t.dims() != dims)
    throw Error(std::string(what) + " must be " + dims_str(dims) + ", got " + t.str());
  if (t.dtype() != DType::Float32)
    throw Error(std::string(what) + ": only float32 is supported, got " + t.str());
}

// The recurrence split over threads (runtime/lockstep.h): each takes a slice of the
// hidden units (of every gate) for every step, so its rows of R stay in its own cache,
// and the slices of a step finish before the next step, which reads the whole new
// state (GRU's reset-first form: twice a step, since its last product reads all of
// r * h). A thread takes a slice only when a step's recurrent product in it is at least
// kMinStepWork multiply-adds: handing a step over costs about as much as that much
// work. Slices are whole vectors of kSliceLanes floats.
constexpr int64_t kMinStepWork = 16384;
constexpr int64_t kSliceLanes = 16;

int recurrent_slices(int threads, int64_t batch, int64_t gh, int64_t hs) {
  const int64_t by_work = batch * gh * hs / kMinStepWork;
  const int64_t by_lanes = (hs + kSliceLanes - 1) / kSliceLanes;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({threads, by_work, by_lanes})));
}

// What the plain kernel keeps from run to run: R packed for the batch-1 recurrent
// product (gemv_packed16), made once when R is a constant whose hidden size is whole
// blocks of 16, and the work buffers (a run of a 100-step layer otherwise allocated and
// faulted in about half a megabyte each time).
// A worker's scratch (runtime/lockstep.h): a slice of a step is computed here, at the
// indices the shared state has, and copied out when committed. hr: the recurrent
// products; g: the gates; h, c: the new state; rh: GRU's r * h.
struct SliceScratch {
  AlignedFloats hr, g, h, c, rh;
};

struct PlainState {
  AlignedFloats r_packed;  // [dirs][gates * hidden / 16][hidden][16], or empty
  std::mutex busy;         // the buffers below, for one run at a time
  AlignedFloats xw, g, h[2], c, rh;
  std::vector<SliceScratch> scratch;  // one per worker
};

void run_plain(KernelContext& ctx, const Spec& s, const std::vector<int64_t>& lens, float* y,
               float* yh, float* yc, PlainState* state);

bool default_activations(const Spec& s) {
  for (std::size_t i = 0; i < s.acts.size(); ++i) {
    const Act want = i % activation_count(s.cell) == 0 ? Act::Sigmoid : Act::Tanh;
    if (s.acts[i].kind != want) return false;
  }
  return true;
}

// Whether oneDNN's cells compute the node: LSTM or GRU (either linear_before_reset)
// with nothing they lack (see recurrent_dnnl.h); the run adds whole sequences.
bool onednn_fits(const Spec& s) {
  return s.cell != Cell::Rnn && s.clip <= 0 && !s.input_forget && s.layout == 0 && s.hidden > 0 &&
         default_activations(s);
}

void run_recurrent(KernelContext& ctx, const Spec& s, DnnlRnn* dnnl, PlainState* plain) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const Tensor& r = ctx.in(2);
  if (x.rank() != 3 || x.dtype() != DType::Float32)
    throw Error("X must be a float32 3-D tensor, got " + x.str());
  const int64_t seq = x.dims()[s.layout == 0 ? 0 : 1], batch = x.dims()[s.layout == 0 ? 1 : 0];
  const int64_t in_size = x.dims()[2], dirs = s.dirs;
  const int64_t hs = s.hidden > 0 ? s.hidden : (r.rank() == 3 ? r.dims()[2] : 0);
  const int64_t gates = gate_count(s.cell), gh = gates * hs;
  expect_dims(w, {dirs, gh, in_size}, "W");
  expect_dims(r, {dirs, gh, hs}, "R");
  const Tensor* bias = ctx.input(3);
  if (bias) expect_dims(*bias, {dirs, 2 * gh}, "B");
  std::vector<int64_t> lens(static_cast<std::size_t>(batch), seq);
  const bool have_lens = ctx.input(4) != nullptr;
  if (have_lens) {
    lens = ctx.input(4)->to_int64s();
    if (static_cast<int64_t>(lens.size()) != batch)
      throw Error("sequence_lens must have " + std::to_string(batch) + " entries, got " +
                  ctx.input(4)->str());
    for (int64_t l : lens)
      if (l < 0 || l > seq)
        throw Error("sequence_lens entry " + std::to_string(l) + " is outside [0, " +
                    std::to_string(seq) + "]");
  }
  const std::vector<int64_t> state_dims =
      s.layout == 0 ? std::vector<int64_t>{dirs, batch, hs} : std::vector<int64_t>{batch, dirs, hs};
  const Tensor* h0 = ctx.input(5);
  if (h0) expect_dims(*h0, state_dims, "initial_h");
  const Tensor* c0 = s.cell == Cell::Lstm ? ctx.input(6) : nullptr;
  if (c0) expect_dims(*c0, state_dims, "initial_c");
  const Tensor* peep = s.cell == Cell::Lstm ? ctx.input(7) : nullptr;
  if (peep) expect_dims(*peep, {dirs, 3 * hs}, "P");

  float* y = nullptr;
  if (s.has_out[0]) {
    Tensor& yt = ctx.output(0, DType::Float32,
                            s.layout == 0 ? std::vector<int64_t>{seq, dirs, batch, hs}
                                          : std::vector<int64_t>{batch, seq, dirs, hs});
    y = yt.data<float>();
    if (have_lens) std::fill(y, y + yt.numel(), 0.0f);
  }
  float* yh = s.has_out[1] ? ctx.output(1, DType::Float32, state_dims).data<float>() : nullptr;
  float* yc = s.has_out[2] && s.cell == Cell::Lstm
                  ? ctx.output(2, DType::Float32, state_dims).data<float>()
                  : nullptr;
  if (s.has_out[2] && s.cell != Cell::Lstm)
    throw Error(std::string(cell_name(s.cell)) + " has two outputs");

  // oneDNN runs whole sequences only (no per-batch lengths). Weights that are not
  // constants are converted for it on every run, which the measurement then counts.
  if (onednn_fits(s) && seq * batch > 0 &&
      std::all_of(lens.begin(), lens.end(), [&](int64_t l) { return l == seq; })) {
    std::string variant = peep ? "peepholes" : "";
    if (s.cell == Cell::Gru && s.linear_before_reset) variant = "linear_before_reset";
    if (!dnnl) variant += " weights-at-run-time";
    const RecurrentKey key{cell_name(s.cell), dirs,   hs, in_size, seq, batch,
                           ctx.threads(),     variant};
    run_measured(
        key,
        [&] {
          std::unique_ptr<DnnlRnn> own;
          if (!dnnl)
            own = std::make_unique<DnnlRnn>(
                DnnlRnnConfig{s.cell == Cell::Gru, s.linear_before_reset, s.dirs, s.reverse, hs,
                              in_size},
                w.data<float>(), r.data<float>(), bias ? bias->data<float>() : nullptr,
                peep ? peep->data<float>() : nullptr);
          (dnnl ? dnnl : own.get())
              ->run(seq, batch, x.data<float>(), h0 ? h0->data<float>() : nullptr,
                    c0 ? c0->data<float>() : nullptr, y, yh, yc);
        },
        [&] { run_plain(ctx, s, lens, y, yh, yc, plain); });
    return;
  }
  run_plain(ctx, s, lens, y, yh, yc, plain);
}

// The runtime's own kernel, on outputs run_recurrent made and inputs it checked.
void run_plain(KernelContext& ctx, const Spec& s, const std::vector<int64_t>& lens, float* y,
               float* yh, float* yc, PlainState* state) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const Tensor& r = ctx.in(2);
  const Tensor* bias = ctx.input(3);
  const Tensor* h0 = ctx.input(5);
  const Tensor* c0 = s.cell == Cell::Lstm ? ctx.input(6) : nullptr;
  const Tensor* peep = s.cell == Cell::Lstm ? ctx.input(7) : nullptr;
  const int64_t seq = x.dims()[s.layout == 0 ? 0 : 1], batch = x.dims()[s.layout == 0 ? 1 : 0];
  const int64_t in_size = x.dims()[2], dirs = s.dirs;
  const int64_t hs = s.hidden > 0 ? s.hidden : r.dims()[2];
  const int64_t gates = gate_count(s.cell), gh = gates * hs;

  auto x_row = [&](int64_t t, int64_t b) { return s.layout == 0 ? t * batch + b : b * seq + t; };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return s.layout == 0 ? ((t * dirs + d) * batch + b) * hs : ((b * seq + t) * dirs + d) * hs;
  };
  auto state_at = [&](int64_t d, int64_t b) {
    return s.layout == 0 ? (d * batch + b) * hs : (b * dirs + d) * hs;
  };

  // GRU without linear_before_reset multiplies Rh by (r * H), known only after the
  // z and r gates: the step's first product then covers the z and r rows only.
  const bool gru_reset_first = s.cell == Cell::Gru && !s.linear_before_reset;
  const int64_t first_rows = gru_reset_first ? 2 * hs : gh;
  // GRU's candidate gets its recurrent term inside r * (...) (either mode): only the
  // z and r rows take the product as is.
  const int64_t summed_rows = s.cell == Cell::Gru ? 2 * hs : gh;
  const int nact = activation_count(s.cell);

  // The state's buffers, unless another run holds them (then this run's own). Every
  // element is written before it is read: the projection fills xw, each slice of a
  // step the rows of its scratch it reads (then its rows of g, rh, the next h and c),
  // and h, c start from the initial states.
  std::unique_lock<std::mutex> held;
  if (state) held = std::unique_lock<std::mutex>(state->busy, std::try_to_lock);
  PlainState own;
  PlainState& buf = held.owns_lock() ? *state : own;
  auto sized = [](AlignedFloats& v, int64_t n) -> AlignedFloats& {
    v.resize(static_cast<std::size_t>(n));
    return v;
  };
  AlignedFloats& xw = sized(buf.xw, seq * batch * gh);
  // The gates between GRU's two phases (the rest of a step's work is in scratch).
  AlignedFloats& g = sized(buf.g, batch * gh);
  // h of the step before and of this step (each step reads the whole previous h and
  // writes its own hidden units of the next), c, and GRU's r * h.
  AlignedFloats* hbuf = buf.h;
  sized(hbuf[0], batch * hs);
  sized(hbuf[1], batch * hs);
  AlignedFloats& c = sized(buf.c, batch * hs);
  AlignedFloats& rh = sized(buf.rh, batch * hs);
  // R packed for the batch-1 product (the packing assumes the hidden size parsed).
  const float* packed = state && !state->r_packed.empty() && batch == 1 && hs == s.hidden
                            ? state->r_packed.data()
                            : nullptr;
  const int slices = recurrent_slices(ctx.threads(), batch, gh, hs);
  const int64_t per_slice =
      ((hs + slices - 1) / slices + kSliceLanes - 1) / kSliceLanes * kSliceLanes;
  // GRU's reset-first form hands over twice a step (see recurrent_slices).
  const int phases = gru_reset_first ? 2 : 1;
  buf.scratch.resize(static_cast<std::size_t>(slices));
  for (SliceScratch& sc : buf.scratch) {
    sized(sc.hr, batch * gh);
    sized(sc.g, batch * gh);
    sized(sc.h, batch * hs);
    sized(sc.c, batch * hs);
    sized(sc.rh, batch * hs);
  }

  for (int64_t d = 0; d < dirs; ++d) {
    const bool backward = s.reverse || d == 1;
    const float* wd = w.data<float>() + d * gh * in_size;
    const float* rd = r.data<float>() + d * gh * hs;
    const float* wb = bias ? bias->data<float>() + d * 2 * gh : nullptr;
    const float* rb = wb ? wb + gh : nullptr;
    const float* pd = peep ? peep->data<float>() + d * 3 * hs : nullptr;
    const float* rpd = packed ? packed + d * gh * hs : nullptr;
    const Activation* act = &s.acts[static_cast<std::size_t>(d * nact)];

    // Input projection of all steps, with the biases that add outside any gate
    // product (GRU with linear_before_reset keeps Rbh for inside r * (...)).
    if (seq * batch > 0)
      project(seq * batch, gh, in_size, x.data<float>(), wd, xw.data(), ctx.threads());
    if (wb) {
      std::vector<float> bsum(static_cast<std::size_t>(gh));
      for (int64_t j = 0; j < gh; ++j) {
        const bool rb_inside = s.cell == Cell::Gru && s.linear_before_reset && j >= 2 * hs;
        bsum[static_cast<std::size_t>(j)] = wb[j] + (rb_inside ? 0.0f : rb[j]);
      }
      for (int64_t i = 0; i < seq * batch; ++i) {
        float* row = xw.data() + i * gh;
        for (int64_t j = 0; j < gh; ++j) row[j] += bsum[static_cast<std::size_t>(j)];
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      float* hb = hbuf[0].data() + b * hs;
      float* cb = c.data() + b * hs;
      if (h0)
        std::memcpy(hb, h0->data<float>() + state_at(d, b), sizeof(float) * hs);
      else
        std::fill(hb, hb + hs, 0.0f);
      if (c0)
        std::memcpy(cb, c0->data<float>() + state_at(d, b), sizeof(float) * hs);
      else
        std::fill(cb, cb + hs, 0.0f);
    }

    // Phase `phase` of step `step` for hidden units [k0, k1) of every gate, into the
    // worker's scratch L (runtime/lockstep.h: it reads only what earlier steps
    // committed): the recurrent products, pre-activations (and GRU's r * h) first, the
    // cell update second; one phase does both unless GRU's reset-first form splits them.
    auto compute = [&](int64_t step, int phase, int64_t k0, int64_t k1, SliceScratch& L) {
      const int64_t nk = k1 - k0;
      if (nk <= 0) return;
      float* hr = L.hr.data();
      // R's rows of gate q for these hidden units, times the rows of `in` ([batch, hs]).
      // Slices are whole blocks of 16 hidden units (kSliceLanes), as packed R's are.
      auto product = [&](const float* in, int64_t q) {
        if (rpd)
          gemv_packed16(in, rpd + (q * hs + k0) * hs, hs, nk / 16, hr + q * hs + k0);
        else
          rows_times(in, rd + (q * hs + k0) * hs, batch, nk, hs, hr + q * hs + k0, gh);
      };
      const float* hp = hbuf[step & 1].data();
      if (phase == 0) {
        for (int64_t q = 0; q < first_rows / hs; ++q) product(hp, q);
        // Pre-activations of the gates from the projection of each batch's own time step.
        for (int64_t b = 0; b < batch; ++b) {
          if (step >= lens[b]) continue;
          const int64_t t = backward ? lens[b] - 1 - step : step;
          const float* xr = xw.data() + x_row(t, b) * gh;
          float* gb = L.g.data() + b * gh;
          const float* hb = hr + b * gh;
          for (int64_t q = 0; q < gates; ++q)
            for (int64_t j = q * hs + k0; j < q * hs + k1; ++j)
              gb[j] = q * hs < summed_rows ? xr[j] + hb[j] : xr[j];
        }
        if (gru_reset_first) {
          for (int64_t b = 0; b < batch; ++b) {
            float* rg = L.g.data() + b * gh + hs + k0;
            float* rhb = L.rh.data() + b * hs + k0;
            if (step < lens[b]) {
              clip_to(rg, nk, s.clip);
              act[0].apply(rg, nk);
              for (int64_t k = 0; k < nk; ++k) rhb[k] = rg[k] * hp[b * hs + k0 + k];
            } else {
              std::fill(rhb, rhb + nk, 0.0f);
            }
          }
        }
        if (phases == 2) return;
      } else {
        // The gates phase 0 committed, for these hidden units.
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t q = 0; q < gates; ++q)
            std::memcpy(L.g.data() + b * gh + q * hs + k0, g.data() + b * gh + q * hs + k0,
                        sizeof(float) * nk);
      }
      if (gru_reset_first) product(rh.data(), 2);
      for (int64_t b = 0; b < batch; ++b) {
        const float* hold = hp + b * hs + k0;
        float* hb = L.h.data() + b * hs + k0;
        float* cb = L.c.data() + b * hs + k0;
        if (s.cell == Cell::Lstm) std::memcpy(cb, c.data() + b * hs + k0, sizeof(float) * nk);
        if (step >= lens[b]) {
          std::memcpy(hb, hold, sizeof(float) * nk);
          continue;
        }
        float* gb = L.g.data() + b * gh + k0;
        const float* hrb = hr + b * gh + k0;
        if (s.cell == Cell::Rnn) {
          clip_to(gb, nk, s.clip);
          act[0].apply(gb, nk);
          std::memcpy(hb, gb, sizeof(float) * nk);
        } else if (s.cell == Cell::Gru) {
          float* z = gb;
          float* rg = gb + hs;
          float* n = gb + 2 * hs;
          clip_to(z, nk, s.clip);
          act[0].apply(z, nk);
          if (gru_reset_first) {
            for (int64_t k = 0; k < nk; ++k) n[k] += hrb[2 * hs + k];
          } else {
            clip_to(rg, nk, s.clip);
            act[0].apply(rg, nk);
            const float* rbh = rb ? rb + 2 * hs + k0 : nullptr;
            for (int64_t k = 0; k < nk; ++k)
              n[k] += rg[k] * (hrb[2 * hs + k] + (rbh ? rbh[k] : 0.0f));
          }
          clip_to(n, nk, s.clip);
          act[1].apply(n, nk);
          for (int64_t k = 0; k < nk; ++k) hb[k] = (1.0f - z[k]) * n[k] + z[k] * hold[k];
        } else {
          // ONNX gate order: i, o, f, c; peepholes: i, o, f.
          float* ig = gb;
          float* og = gb + hs;
          float* fg = gb + 2 * hs;
          float* cg = gb + 3 * hs;
          const float* pk = pd ? pd + k0 : nullptr;
          if (pk)
            for (int64_t k = 0; k < nk; ++k) {
              ig[k] += pk[k] * cb[k];
              fg[k] += pk[2 * hs + k] * cb[k];
            }
          clip_to(ig, nk, s.clip);
          act[0].apply(ig, nk);
          if (s.input_forget) {
            for (int64_t k = 0; k < nk; ++k) fg[k] = 1.0f - ig[k];
          } else {
            clip_to(fg, nk, s.clip);
            act[0].apply(fg, nk);
          }
          clip_to(cg, nk, s.clip);
          act[1].apply(cg, nk);
          for (int64_t k = 0; k < nk; ++k) cb[k] = fg[k] * cb[k] + ig[k] * cg[k];
          if (pk)
            for (int64_t k = 0; k < nk; ++k) og[k] += pk[hs + k] * cb[k];
          clip_to(og, nk, s.clip);
          act[0].apply(og, nk);
          // h(C) goes through the spare gate row so that C keeps its value.
          std::memcpy(cg, cb, sizeof(float) * nk);
          act[2].apply(cg, nk);
          for (int64_t k = 0; k < nk; ++k) hb[k] = og[k] * cg[k];
        }
      }
    };
    // Copies what compute left in L for these hidden units into the shared state: the
    // gates and r * h after GRU's first phase, else the new h (and y) and c.
    auto commit = [&](int64_t step, int phase, int64_t k0, int64_t k1, const SliceScratch& L) {
      const int64_t nk = k1 - k0;
      if (nk <= 0) return;
      const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(nk);
      for (int64_t b = 0; b < batch; ++b) {
        if (phases == 2 && phase == 0) {
          for (int64_t q = 0; q < gates; ++q)
            std::memcpy(g.data() + b * gh + q * hs + k0, L.g.data() + b * gh + q * hs + k0, bytes);
          std::memcpy(rh.data() + b * hs + k0, L.rh.data() + b * hs + k0, bytes);
          continue;
        }
        const float* hb = L.h.data() + b * hs + k0;
        std::memcpy(hbuf[(step + 1) & 1].data() + b * hs + k0, hb, bytes);
        if (s.cell == Cell::Lstm)
          std::memcpy(c.data() + b * hs + k0, L.c.data() + b * hs + k0, bytes);
        if (y && step < lens[b]) {
          const int64_t t = backward ? lens[b] - 1 - step : step;
          std::memcpy(y + y_at(t, d, b) + k0, hb, bytes);
        }
      }
    };
    auto slice_range = [&](int slice) {
      const int64_t k0 = std::min<int64_t>(slice * per_slice, hs);
      return std::pair<int64_t, int64_t>{k0, std::min(k0 + per_slice, hs)};
    };
    run_lockstep(
        seq * phases, slices, slices,
        [&](int64_t round, int slice, int worker) {
          const auto [k0, k1] = slice_range(slice);
          compute(round / phases, static_cast<int>(round % phases), k0, k1,
                  buf.scratch[static_cast<std::size_t>(worker)]);
        },
        [&](int64_t round, int slice, int worker) {
          const auto [k0, k1] = slice_range(slice);
          commit(round / phases, static_cast<int>(round % phases), k0, k1,
                 buf.scratch[static_cast<std::size_t>(worker)]);
        });
    const float* h_last = hbuf[seq & 1].data();
    for (int64_t b = 0; b < batch; ++b) {
      if (yh) std::memcpy(yh + state_at(d, b), h_last + b * hs, sizeof(float) * hs);
      if (yc) std::memcpy(yc + state_at(d, b), c.data() + b * hs, sizeof(float) * hs);
    }
  }
}

// The oneDNN form of the node when its weights are constants (converted once here).
std::shared_ptr<DnnlRnn> dnnl_form(const Graph& g, const Node& n, const Spec& s) {
  if (!onednn_fits(s)) return nullptr;
  const auto w = constant_input(g, n, 1), r = constant_input(g, n, 2);
  const bool has_b = n.inputs.size() > 3 && n.inputs[3] != kNoValue;
  const bool has_p = s.cell == Cell::Lstm && n.inputs.size() > 7 && n.inputs[7] != kNoValue;
  const auto b = has_b ? constant_input(g, n, 3) : std::nullopt;
  const auto p = has_p ? constant_input(g, n, 7) : std::nullopt;
  if (!w || !r || (has_b && !b) || (has_p && !p)) return nullptr;
  const int64_t gh = gate_count(s.cell) * s.hidden;
  auto fits = [](const Tensor& t, std::vector<int64_t> dims) {
    return t.dtype() == DType::Float32 && t.dims() == dims;
  };
  if (w->rank() != 3 || !fits(*w, {s.dirs, gh, w->dims()[2]}) ||
      !fits(*r, {s.dirs, gh, s.hidden}) || (b && !fits(*b, {s.dirs, 2 * gh})) ||
      (p && !fits(*p, {s.dirs, 3 * s.hidden})))
    return nullptr;
  DnnlRnnConfig cfg{s.cell == Cell::Gru, s.linear_before_reset, s.dirs, s.reverse, s.hidden,
                    w->dims()[2]};
  return std::make_shared<DnnlRnn>(cfg, w->data<float>(), r->data<float>(),
                                   b ? b->data<float>() : nullptr, p ? p->data<float>() : nullptr);
}

// The plain kernel's state, with R packed when it is a constant of whole 16-unit blocks.
std::shared_ptr<PlainState> plain_state(const Graph& g, const Node& n, const Spec& s) {
  auto st = std::make_shared<PlainState>();
  const int64_t gh = gate_count(s.cell) * s.hidden;
  if (s.hidden <= 0 || s.hidden % kSliceLanes != 0) return st;
  const auto r = constant_input(g, n, 2);
  if (!r || r->dtype() != DType::Float32 || r->dims() != std::vector<int64_t>{s.dirs, gh, s.hidden})
    return st;
  for (int64_t d = 0; d < s.dirs; ++d) {
    const AlignedFloats p = pack_rows16(r->data<float>() + d * gh * s.hidden, gh, s.hidden);
    st->r_packed.insert(st->r_packed.end(), p.begin(), p.end());
  }
  return st;
}

KernelFactory factory(Cell cell) {
  return [cell](const Graph& g, const Node& n) {
    Spec s = parse_spec(cell, n);
    std::shared_ptr<DnnlRnn> onednn = dnnl_form(g, n, s);
    std::shared_ptr<PlainState> plain = plain_state(g, n, s);
    return fn_kernel(
        [s, onednn, plain](KernelContext& c) { run_recurrent(c, s, onednn.get(), plain.get()); });
  };
}

}  // namespace

void register_recurrent_kernels(KernelTable& t) {
  t["RNN"] = factory(Cell::Rnn);
  t["GRU"] = factory(Cell::Gru);
  t["LSTM"] = factory(Cell::Lstm);
}

}  // namespace fx
