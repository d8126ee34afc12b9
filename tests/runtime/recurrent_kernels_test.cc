// SPDX-License-Identifier: Apache-2.0
// RNN, GRU and LSTM against hand-derived values and against a direct transcription
// of the ONNX equations (one time step, one batch entry at a time, libm's
// functions), over directions, sequence lengths, layouts and optional inputs.

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>

#include "runtime/recurrent_path.h"
#include "runtime_test_util.h"
#include "util/error.h"

namespace fx::test {
namespace {

float sigmoid(float v) {
  return 1.0f / (1.0f + std::exp(-v));
}

struct Case {
  std::string op = "LSTM";
  int64_t seq = 5, batch = 2, input = 7, hidden = 6;
  std::string direction = "forward";
  int layout = 0;
  bool bias = true, lens = false, h0 = false, c0 = false, peep = false;
  int64_t linear_before_reset = 0;
  float clip = 0;
  bool input_forget = false;
};

int64_t gates_of(const std::string& op) {
  return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
}

struct Data {
  std::vector<float> x, w, r, b, h0, c0, p;
  std::vector<int32_t> lens;
};

Data make_data(const Case& k) {
  const int64_t d = k.direction == "bidirectional" ? 2 : 1, g = gates_of(k.op);
  Data v;
  v.x = random_floats(k.seq * k.batch * k.input, 1);
  v.w = random_floats(d * g * k.hidden * k.input, 2);
  v.r = random_floats(d * g * k.hidden * k.hidden, 3);
  v.b = random_floats(d * 2 * g * k.hidden, 4);
  v.h0 = random_floats(d * k.batch * k.hidden, 5);
  v.c0 = random_floats(d * k.batch * k.hidden, 6);
  v.p = random_floats(d * 3 * k.hidden, 7);
  for (int64_t b = 0; b < k.batch; ++b)
    v.lens.push_back(k.lens ? static_cast<int32_t>(k.seq - (b * 2) % k.seq)
                            : static_cast<int32_t>(k.seq));
  return v;
}

// The ONNX equations, literally. Returns {Y, Y_h, Y_c} in the case's layout.
std::vector<std::vector<float>> reference(const Case& k, const Data& v) {
  const int64_t D = k.direction == "bidirectional" ? 2 : 1, G = gates_of(k.op), H = k.hidden;
  const int64_t S = k.seq, B = k.batch, I = k.input;
  auto xi = [&](int64_t t, int64_t b, int64_t i) {
    return v.x[((k.layout == 0 ? t * B + b : b * S + t) * I) + i];
  };
  auto st = [&](int64_t d, int64_t b) { return k.layout == 0 ? (d * B + b) * H : (b * D + d) * H; };
  auto yi = [&](int64_t t, int64_t d, int64_t b) {
    return k.layout == 0 ? ((t * D + d) * B + b) * H : ((b * S + t) * D + d) * H;
  };
  auto clip = [&](float f) { return k.clip > 0 ? std::clamp(f, -k.clip, k.clip) : f; };
  std::vector<float> y(static_cast<std::size_t>(S * D * B * H), 0.0f), yh(D * B * H), yc(D * B * H);
  for (int64_t d = 0; d < D; ++d) {
    const bool back = k.direction == "reverse" || d == 1;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<float> h(H), c(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = k.h0 ? v.h0[st(d, b) + j] : 0.0f;
        c[j] = k.c0 ? v.c0[st(d, b) + j] : 0.0f;
      }
      const int64_t len = v.lens[b];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = back ? len - 1 - s : s;
        // xw[g], hw[g] for every gate row g, with their biases.
        std::vector<float> xw(G * H), hw(G * H);
        for (int64_t gi = 0; gi < G * H; ++gi) {
          float a = k.bias ? v.b[d * 2 * G * H + gi] : 0.0f;
          for (int64_t i = 0; i < I; ++i) a += xi(t, b, i) * v.w[(d * G * H + gi) * I + i];
          xw[gi] = a;
          float e = k.bias ? v.b[d * 2 * G * H + G * H + gi] : 0.0f;
          for (int64_t i = 0; i < H; ++i) e += h[i] * v.r[(d * G * H + gi) * H + i];
          hw[gi] = e;
        }
        std::vector<float> nh(H);
        if (k.op == "RNN") {
          for (int64_t j = 0; j < H; ++j) nh[j] = std::tanh(clip(xw[j] + hw[j]));
        } else if (k.op == "GRU") {
          std::vector<float> r(H);
          for (int64_t j = 0; j < H; ++j) r[j] = sigmoid(clip(xw[H + j] + hw[H + j]));
          for (int64_t j = 0; j < H; ++j) {
            const float z = sigmoid(clip(xw[j] + hw[j]));
            float hh;
            if (k.linear_before_reset) {
              hh = std::tanh(clip(xw[2 * H + j] + r[j] * hw[2 * H + j]));
            } else {
              float e = k.bias ? v.b[d * 2 * G * H + G * H + 2 * H + j] : 0.0f;
              for (int64_t i = 0; i < H; ++i)
                e += r[i] * h[i] * v.r[(d * G * H + 2 * H + j) * H + i];
              hh = std::tanh(clip(xw[2 * H + j] + e));
            }
            nh[j] = (1 - z) * hh + z * h[j];
          }
        } else {
          const float* p = v.p.data() + d * 3 * H;
          for (int64_t j = 0; j < H; ++j) {
            const float pi = k.peep ? p[j] : 0.0f, po = k.peep ? p[H + j] : 0.0f,
                        pf = k.peep ? p[2 * H + j] : 0.0f;
            const float ig = sigmoid(clip(xw[j] + hw[j] + pi * c[j]));
            const float fg =
                k.input_forget ? 1 - ig : sigmoid(clip(xw[2 * H + j] + hw[2 * H + j] + pf * c[j]));
            const float cc = std::tanh(clip(xw[3 * H + j] + hw[3 * H + j]));
            c[j] = fg * c[j] + ig * cc;
            const float og = sigmoid(clip(xw[H + j] + hw[H + j] + po * c[j]));
            nh[j] = og * std::tanh(c[j]);
          }
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j) y[yi(t, d, b) + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        yh[st(d, b) + j] = h[j];
        yc[st(d, b) + j] = c[j];
      }
    }
  }
  return {y, yh, yc};
}

std::vector<Tensor> run_case(const Case& k, const Data& v, const std::vector<int>& constant = {},
                             int threads = 2) {
  const int64_t D = k.direction == "bidirectional" ? 2 : 1, G = gates_of(k.op), H = k.hidden;
  const std::vector<int64_t> xd = k.layout == 0 ? std::vector<int64_t>{k.seq, k.batch, k.input}
                                                : std::vector<int64_t>{k.batch, k.seq, k.input};
  const std::vector<int64_t> sd =
      k.layout == 0 ? std::vector<int64_t>{D, k.batch, H} : std::vector<int64_t>{k.batch, D, H};
  std::vector<Tensor> in = {floats(xd, v.x), floats({D, G * H, k.input}, v.w),
                            floats({D, G * H, H}, v.r)};
  in.push_back(k.bias ? floats({D, 2 * G * H}, v.b) : Tensor());
  in.push_back(k.lens ? Tensor::from_int32s({k.batch}, v.lens) : Tensor());
  in.push_back(k.h0 ? floats(sd, v.h0) : Tensor());
  if (k.op == "LSTM") {
    in.push_back(k.c0 ? floats(sd, v.c0) : Tensor());
    in.push_back(k.peep ? floats({D, 3 * H}, v.p) : Tensor());
  }
  GraphBuilder::AttrList attrs = {
      {"hidden_size", H}, {"direction", k.direction}, {"layout", int64_t{k.layout}}};
  if (k.op == "GRU") attrs.push_back({"linear_before_reset", k.linear_before_reset});
  if (k.clip > 0) attrs.push_back({"clip", k.clip});
  if (k.input_forget) attrs.push_back({"input_forget", int64_t{1}});
  return run_op(k.op, in, attrs, k.op == "LSTM" ? 3 : 2, constant, threads);
}

// `constant`: inputs given as initializers (as exporters write the weights).
void expect_matches_reference(const Case& k, const std::vector<int>& constant = {},
                              int threads = 2) {
  const Data v = make_data(k);
  const auto want = reference(k, v);
  const auto got = run_case(k, v, constant, threads);
  EXPECT_THAT(got[0], FloatsNear(want[0])) << "Y";
  EXPECT_THAT(got[1], FloatsNear(want[1])) << "Y_h";
  if (k.op == "LSTM") {
    EXPECT_THAT(got[2], FloatsNear(want[2])) << "Y_c";
  }
}

TEST(RecurrentKernels, RnnByHand) {
  // One unit, one input: h1 = tanh(0.5 * 1 + 0.1), h2 = tanh(0.5 * 2 + 0.25 * h1 + 0.1).
  auto out = run_op("RNN",
                    {floats({2, 1, 1}, {1, 2}), floats({1, 1, 1}, {0.5f}),
                     floats({1, 1, 1}, {0.25f}), floats({1, 2}, {0.1f, 0.0f})},
                    {{"hidden_size", int64_t{1}}}, 2);
  const float h1 = std::tanh(0.6f), h2 = std::tanh(1.1f + 0.25f * h1);
  EXPECT_THAT(out[0], FloatsNear(std::vector<float>{h1, h2}));
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_THAT(out[1], FloatsNear(std::vector<float>{h2}));
}

TEST(RecurrentKernels, LstmForwardBatchOneUsesTheVectorPath) {
  expect_matches_reference({.op = "LSTM", .seq = 4, .batch = 1, .input = 9, .hidden = 37});
}

TEST(RecurrentKernels, LstmBidirectionalWithEverything) {
  expect_matches_reference({.op = "LSTM",
                            .batch = 3,
                            .direction = "bidirectional",
                            .lens = true,
                            .h0 = true,
                            .c0 = true,
                            .peep = true});
}

TEST(RecurrentKernels, LstmBatchFirstLayoutReverseClipInputForget) {
  expect_matches_reference({.op = "LSTM",
                            .direction = "reverse",
                            .layout = 1,
                            .h0 = true,
                            .c0 = true,
                            .clip = 0.3f,
                            .input_forget = true});
}

TEST(RecurrentKernels, GruResetBeforeLinear) {
  expect_matches_reference(
      {.op = "GRU", .batch = 3, .direction = "bidirectional", .lens = true, .h0 = true});
  expect_matches_reference({.op = "GRU", .batch = 1, .hidden = 19, .h0 = true});
}

TEST(RecurrentKernels, GruLinearBeforeReset) {
  expect_matches_reference(
      {.op = "GRU", .direction = "reverse", .layout = 1, .h0 = true, .linear_before_reset = 1});
  expect_matches_reference({.op = "GRU", .batch = 1, .hidden = 33, .linear_before_reset = 1});
}

TEST(RecurrentKernels, RnnWithoutBiasAndWithSequenceLengths) {
  expect_matches_reference({.op = "RNN", .batch = 4, .bias = false, .lens = true});
}

TEST(RecurrentKernels, ReluActivationAndAlphaTakenInOrder) {
  // activations Relu then LeakyRelu(0.5) for a bidirectional RNN: the backward
  // direction of an input of all -1 with zero weights gives 0.5 * (-1 * 1).
  auto out =
      run_op("RNN", {floats({1, 1, 1}, {-1}), floats({2, 1, 1}, {1, 1}), floats({2, 1, 1}, {0, 0})},
             {{"hidden_size", int64_t{1}},
              {"direction", std::string("bidirectional")},
              {"activations", std::vector<std::string>{"Relu", "LeakyRelu"}},
              {"activation_alpha", std::vector<float>{0.5f}}},
             2);
  EXPECT_THAT(out[1], FloatsNear(std::vector<float>{0.0f, -0.5f}));
}

// Constant weights, one and two threads (small layers: one slice, whatever the threads).
TEST(RecurrentKernels, ConstantWeightsMatchTheEquations) {
  const std::vector<int> lstm_weights = {1, 2, 3, 7}, gru_weights = {1, 2, 3};
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    expect_matches_reference({.op = "LSTM",
                              .batch = 3,
                              .direction = "bidirectional",
                              .h0 = true,
                              .c0 = true,
                              .peep = true},
                             lstm_weights, threads);
    expect_matches_reference({.op = "LSTM", .batch = 1, .hidden = 37, .direction = "reverse"},
                             lstm_weights, threads);
    expect_matches_reference({.op = "GRU", .batch = 2, .direction = "bidirectional", .h0 = true},
                             gru_weights, threads);
    expect_matches_reference(
        {.op = "GRU", .batch = 1, .direction = "reverse", .h0 = true, .linear_before_reset = 1},
        gru_weights, threads);
    expect_matches_reference({.op = "GRU", .batch = 3, .bias = false, .linear_before_reset = 1},
                             {1, 2}, threads);
  }
}

// FX_RECURRENT_PATH set for one scope.
class ForcedPath {
 public:
  explicit ForcedPath(const char* path) { setenv("FX_RECURRENT_PATH", path, 1); }
  ~ForcedPath() { unsetenv("FX_RECURRENT_PATH"); }
};

// The choice recorded for the last layer of cell `op` with this hidden size, if any.
std::optional<RecurrentChoice> choice_for(const std::string& op, int64_t hidden, int64_t seq) {
  std::optional<RecurrentChoice> found;
  for (const auto& c : recurrent_choices())
    if (c.key.cell == op && c.key.hidden == hidden && c.key.seq == seq) found = c;
  return found;
}

// Each layer form oneDNN fits (LSTM with peepholes and states, both directions; GRU
// both ways of linear_before_reset), run by oneDNN's primitive and by the plain kernel:
// both match the equations and each other, and the recorded choice shows which ran.
TEST(RecurrentKernels, OneDnnPrimitiveAndPlainKernelAgree) {
  const std::vector<Case> cases = {
      {.op = "LSTM",
       .seq = 7,
       .batch = 3,
       .hidden = 11,
       .direction = "bidirectional",
       .h0 = true,
       .c0 = true,
       .peep = true},
      {.op = "LSTM", .seq = 6, .batch = 1, .hidden = 13, .direction = "reverse"},
      {.op = "GRU", .seq = 5, .batch = 2, .hidden = 17, .direction = "bidirectional", .h0 = true},
      {.op = "GRU", .seq = 4, .batch = 3, .hidden = 19, .h0 = true, .linear_before_reset = 1},
      // Weights as graph inputs, not constants: converted for oneDNN on each run.
      {.op = "LSTM", .seq = 3, .batch = 2, .hidden = 21, .h0 = true, .c0 = true},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    SCOPED_TRACE(k.op + " hidden " + std::to_string(k.hidden));
    const std::vector<int> weights = i + 1 == cases.size() ? std::vector<int>{}
                                     : k.op == "LSTM"      ? std::vector<int>{1, 2, 3, 7}
                                                           : std::vector<int>{1, 2, 3};
    const Data v = make_data(k);
    std::vector<Tensor> by[2];
    for (RecurrentPath path : {RecurrentPath::OneDnn, RecurrentPath::Plain}) {
      ForcedPath forced(recurrent_path_name(path));
      expect_matches_reference(k, weights, 2);
      by[static_cast<int>(path)] = run_case(k, v, weights, 2);
      const auto c = choice_for(k.op, k.hidden, k.seq);
      ASSERT_TRUE(c) << "the layer did not reach the choice (oneDNN does not fit it)";
      EXPECT_EQ(c->path, path);
      EXPECT_TRUE(c->forced);
    }
    for (std::size_t i = 0; i < by[0].size(); ++i)
      EXPECT_THAT(by[0][i], FloatsNear(by[1][i].to_floats())) << "output " << i;
  }
}

// Unforced, the first run measures both paths and keeps the faster; later runs reuse it.
TEST(RecurrentKernels, ThePathIsMeasuredOnceOnTheMachine) {
  const Case k{.op = "LSTM", .seq = 9, .batch = 2, .input = 5, .hidden = 23, .h0 = true};
  expect_matches_reference(k, {1, 2, 3}, 2);
  const auto c = choice_for("LSTM", 23, 9);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->forced);
  EXPECT_GT(c->onednn_us, 0);
  EXPECT_GT(c->plain_us, 0);
  EXPECT_EQ(c->path, c->onednn_us < c->plain_us ? RecurrentPath::OneDnn : RecurrentPath::Plain);
  expect_matches_reference(k, {1, 2, 3}, 2);
  const auto again = choice_for("LSTM", 23, 9);
  EXPECT_EQ(again->onednn_us, c->onednn_us);  // not measured again
}

// The calling thread pinned to one of its cores beside a busy thread pinned there too,
// so that the OS takes the core from it every time slice; release() (or the destructor)
// stops the busy thread and restores the caller's cores.
class BusyCore {
 public:
  BusyCore() {
    if (pthread_getaffinity_np(pthread_self(), sizeof own_, &own_) != 0) return;
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &own_)) ++cpu;
    if (cpu == CPU_SETSIZE) return;
    CPU_ZERO(&one_);
    CPU_SET(cpu, &one_);
    hog_ = std::thread([this] {
      pthread_setaffinity_np(pthread_self(), sizeof one_, &one_);
      while (!stop_.load(std::memory_order_relaxed)) {
      }
    });
    pinned_ = pthread_setaffinity_np(pthread_self(), sizeof one_, &one_) == 0;
  }
  ~BusyCore() { release(); }
  bool pinned() const { return pinned_; }
  void release() {
    if (!hog_.joinable()) return;
    pthread_setaffinity_np(pthread_self(), sizeof own_, &own_);
    stop_ = true;
    hog_.join();
  }

 private:
  cpu_set_t own_{}, one_{};
  std::atomic<bool> stop_{false};
  std::thread hog_;
  bool pinned_ = false;
};

// A path whose timed runs the OS interrupts (here: the test thread shares one core with
// a busy thread, and the path spins for longer than a time slice) is run again, up to
// a bound, while the other path, undisturbed, runs the usual few times.
TEST(RecurrentKernels, AMeasuredRunTheOsInterruptedIsRunAgain) {
  BusyCore busy;
  ASSERT_TRUE(busy.pinned()) << "could not pin the test thread";
  unsetenv("FX_RECURRENT_PATH");
  static int tries = 0;  // a key of its own each time (the choice is kept per process)
  const RecurrentKey key{"LSTM", 1, 7, 3, 5, 1, 2, "disturbed " + std::to_string(++tries)};
  int onednn_calls = 0, plain_calls = 0;
  const int64_t switches_before = involuntary_switches();
  const RecurrentPath chosen = run_measured(
      key, [&] { ++onednn_calls; },
      [&] {
        ++plain_calls;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
      });
  const int64_t switches = involuntary_switches() - switches_before;
  busy.release();
  ASSERT_GT(switches, 0) << "the busy thread never took the core (nothing to test)";
  EXPECT_EQ(chosen, RecurrentPath::OneDnn);
  RecurrentChoice c;
  for (const RecurrentChoice& x : recurrent_choices())
    if (x.key.str() == key.str()) c = x;
  EXPECT_EQ(c.plain_runs, plain_calls);
  EXPECT_GT(plain_calls, 3);  // every spin of 20 ms loses the core at least once
  EXPECT_LE(plain_calls, 12);
  EXPECT_GE(onednn_calls, 3);
  EXPECT_LT(onednn_calls, plain_calls);
}

// The first call's outputs are the chosen path's, as every later call's are (the two
// paths agree only to rounding), even when the path left behind needed more runs than
// the chosen one and so ran last: here oneDNN's runs are interrupted and plain wins.
TEST(RecurrentKernels, TheFirstCallEndsOnTheChosenPath) {
  BusyCore busy;
  ASSERT_TRUE(busy.pinned()) << "could not pin the test thread";
  unsetenv("FX_RECURRENT_PATH");
  static int tries = 0;
  const RecurrentKey key{"LSTM", 1, 7, 3, 5, 1, 2, "last run " + std::to_string(++tries)};
  std::optional<RecurrentPath> last;
  const int64_t switches_before = involuntary_switches();
  const RecurrentPath chosen = run_measured(
      key,
      [&] {
        last = RecurrentPath::OneDnn;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
      },
      [&] { last = RecurrentPath::Plain; });
  const int64_t switches = involuntary_switches() - switches_before;
  busy.release();
  ASSERT_GT(switches, 0) << "the busy thread never took the core (nothing to test)";
  EXPECT_EQ(chosen, RecurrentPath::Plain);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(*last, chosen) << "the first call's outputs came from the path not chosen";
}

// What oneDNN lacks stays with the plain kernel, whatever is forced: RNN cells, clip,
// input_forget, per-batch lengths.
TEST(RecurrentKernels, FormsOneDnnLacksRunThePlainKernel) {
  ForcedPath forced("onednn");
  const std::vector<std::pair<Case, std::vector<int>>> cases = {
      {{.op = "RNN", .seq = 3, .hidden = 29}, {1, 2, 3}},
      {{.op = "LSTM", .seq = 3, .hidden = 31, .clip = 0.5f}, {1, 2, 3}},
      {{.op = "LSTM", .seq = 3, .hidden = 41, .input_forget = true}, {1, 2, 3}},
      {{.op = "GRU", .seq = 3, .hidden = 43, .lens = true}, {1, 2, 3}},
  };
  for (const auto& [k, weights] : cases) {
    SCOPED_TRACE(k.op + " hidden " + std::to_string(k.hidden));
    expect_matches_reference(k, weights, 2);
    EXPECT_FALSE(choice_for(k.op, k.hidden, k.seq));
  }
  setenv("FX_RECURRENT_PATH", "fast", 1);
  EXPECT_THROW(expect_matches_reference({.op = "LSTM", .seq = 2, .hidden = 53}, {1, 2, 3}, 2),
               Error);
}

TEST(RecurrentKernels, OmittedYOutputIsNotWritten) {
  // outputs ["", Y_h], as exporters write an LSTM whose sequence output is unused.
  const Case k{.op = "GRU", .seq = 3, .batch = 1, .input = 2, .hidden = 3};
  const Data v = make_data(k);
  GraphBuilder gb;
  Node n;
  n.name = "gru";
  n.op_type = "GRU";
  n.inputs = {gb.input("x", {3, 1, 2}), gb.input("w", {1, 9, 2}), gb.input("r", {1, 9, 3}),
              gb.input("b", {1, 18})};
  Value yh;
  yh.name = "y_h";
  yh.dtype = DType::Float32;
  n.outputs = {kNoValue, gb.graph().add_value(std::move(yh))};
  n.attrs.set("hidden_size", int64_t{3});
  const ValueId out = n.outputs[1];
  gb.graph().add_node(std::move(n));
  gb.output(out);
  Graph g = gb.build();
  Executor ex(g, ExecutorOptions{2});
  auto got = ex.run({{"x", floats({3, 1, 2}, v.x)},
                     {"w", floats({1, 9, 2}, v.w)},
                     {"r", floats({1, 9, 3}, v.r)},
                     {"b", floats({1, 18}, v.b)}});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_THAT(got[0], FloatsNear(reference(k, v)[1]));
}

TEST(RecurrentKernels, BadShapesAreErrorsNamingTheInput) {
  try {
    run_op("LSTM",
           {floats({2, 1, 3}, std::vector<float>(6)), floats({1, 8, 3}, std::vector<float>(24)),
            floats({1, 8, 3}, std::vector<float>(24))},
           {{"hidden_size", int64_t{2}}}, 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("R must be [1,8,2]"));
  }
}

// Layers large enough to split the hidden units over threads (runtime/lockstep.h):
// two and three slices, an uneven last slice, GRU's two-phase step, sequence lengths
// that end batch entries early; each against the equations and the one-thread run.
TEST(RecurrentKernels, HiddenUnitsSplitOverThreadsMatchTheEquations) {
  const std::vector<Case> cases = {
      {.op = "LSTM", .seq = 6, .batch = 1, .input = 11, .hidden = 96, .h0 = true, .c0 = true},
      {.op = "LSTM",
       .seq = 5,
       .batch = 3,
       .input = 8,
       .hidden = 100,
       .direction = "bidirectional",
       .lens = true,
       .peep = true},
      {.op = "GRU", .seq = 6, .batch = 2, .input = 9, .hidden = 112, .lens = true, .h0 = true},
      {.op = "GRU", .seq = 4, .batch = 1, .input = 5, .hidden = 96, .linear_before_reset = 1},
      {.op = "RNN", .seq = 5, .batch = 4, .input = 7, .hidden = 96, .direction = "reverse"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.op + " hidden " + std::to_string(k.hidden));
    const Data v = make_data(k);
    const auto one = run_case(k, v, {1, 2, 3}, 1);
    for (int threads : {2, 3}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      expect_matches_reference(k, {1, 2, 3}, threads);
      const auto many = run_case(k, v, {1, 2, 3}, threads);
      for (std::size_t i = 0; i < many.size(); ++i)
        EXPECT_THAT(many[i], FloatsNear(one[i].to_floats())) << "output " << i;
    }
  }
}

// Batch-1 layers whose R is a constant of whole 16-unit blocks run their recurrent
// product over R packed once (runtime/gemv.h): against the equations and against the
// same layer with R as a graph input (the unpacked rows), on one and two threads (the
// plain kernel forced: oneDNN would take these forms if it measured faster); 48
// hidden units leave a lone block after the groups of four, an odd input size a tail.
TEST(RecurrentKernels, PackedRecurrentWeightsMatchTheUnpackedProduct) {
  ForcedPath plain("plain");
  const std::vector<Case> cases = {
      {.op = "LSTM", .seq = 7, .batch = 1, .input = 13, .hidden = 48, .h0 = true, .c0 = true},
      {.op = "LSTM",
       .seq = 4,
       .batch = 1,
       .input = 5,
       .hidden = 64,
       .direction = "bidirectional",
       .peep = true},
      {.op = "GRU", .seq = 6, .batch = 1, .input = 9, .hidden = 48, .h0 = true},
      {.op = "GRU",
       .seq = 5,
       .batch = 1,
       .input = 3,
       .hidden = 32,
       .direction = "reverse",
       .linear_before_reset = 1},
      {.op = "RNN", .seq = 5, .batch = 1, .input = 7, .hidden = 80, .h0 = true},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.op + " hidden " + std::to_string(k.hidden) + " " + k.direction);
    const Data v = make_data(k);
    for (int threads : {1, 2}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      expect_matches_reference(k, {1, 2, 3}, threads);
      const auto packed = run_case(k, v, {1, 2, 3}, threads);
      const auto rows = run_case(k, v, {1, 3}, threads);  // R a graph input: not packed
      for (std::size_t i = 0; i < packed.size(); ++i)
        EXPECT_THAT(packed[i], FloatsNear(rows[i].to_floats())) << "output " << i;
    }
  }
}

// The plain kernel keeps its work buffers (and packed R) from run to run: one executor
// run twice on different inputs, with sequence lengths that end one batch entry early
// in the second, gives each run's own outputs.
TEST(RecurrentKernels, ASecondRunOfTheSameKernelOwesNothingToTheFirst) {
  ForcedPath plain("plain");
  Case k{.op = "LSTM", .seq = 5, .batch = 2, .input = 6, .hidden = 32, .h0 = true, .c0 = true};
  const int64_t G = 4, H = k.hidden;
  Data first = make_data(k);
  Data second = first;
  second.x = random_floats(k.seq * k.batch * k.input, 11);
  second.h0 = random_floats(k.batch * H, 12);
  second.lens = {3, 5};
  GraphBuilder b;
  const ValueId x = b.input("x", {k.seq, k.batch, k.input});
  const ValueId w = b.constant("w", floats({1, G * H, k.input}, first.w).to_tensor_data());
  const ValueId r = b.constant("r", floats({1, G * H, H}, first.r).to_tensor_data());
  const ValueId bias = b.constant("b", floats({1, 2 * G * H}, first.b).to_tensor_data());
  const ValueId lens = b.input("lens", {k.batch}, DType::Int32);
  const ValueId h0 = b.input("h0", {1, k.batch, H});
  const ValueId c0 = b.input("c0", {1, k.batch, H});
  for (ValueId o : b.op_multi("LSTM", {x, w, r, bias, lens, h0, c0}, 3, {{"hidden_size", H}}, "l"))
    b.output(o);
  const Graph g = b.build();
  Executor ex(g, ExecutorOptions{2});
  for (const Data* v : {&first, &second, &first}) {
    Case kv = k;
    kv.lens = v == &second;
    const auto want = reference(kv, *v);
    const auto got = ex.run({{"x", floats({k.seq, k.batch, k.input}, v->x)},
                             {"lens", Tensor::from_int32s({k.batch}, v->lens)},
                             {"h0", floats({1, k.batch, H}, v->h0)},
                             {"c0", floats({1, k.batch, H}, v->c0)}});
    for (std::size_t i = 0; i < 3; ++i) EXPECT_THAT(got[i], FloatsNear(want[i])) << "output " << i;
  }
}

}  // namespace
}  // namespace fx::test
