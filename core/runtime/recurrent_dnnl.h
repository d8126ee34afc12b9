// SPDX-License-Identifier: Apache-2.0
#pragma once
// ONNX LSTM and GRU through oneDNN's RNN primitives, for the nodes they fit: constant
// weights, default activations, no clip, input_forget or sequence_lens, layout 0.
// GRU's both forms map: linear_before_reset=0 is oneDNN's gru, 1 its lbr_gru. RNN
// (vanilla) cells, and everything else, run in recurrent_kernels.cc's own kernel,
// which also decides per machine whether this one is used (see there). The weights
// are converted from ONNX's gate order and layout once, when the kernel is built; the
// primitive is made per (sequence length, batch) and kept for the next run.

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace fx {

struct DnnlRnnConfig {
  bool gru = false;  // else LSTM
  bool linear_before_reset = false;
  int dirs = 1;
  bool reverse = false;
  int64_t hidden = 0, input = 0;
};

class DnnlRnn {
 public:
  // ONNX layouts: w [D, G*H, I], r [D, G*H, H], b [D, 2*G*H] or null, p [D, 3*H] or
  // null (LSTM peepholes).
  DnnlRnn(const DnnlRnnConfig& cfg, const float* w, const float* r, const float* b, const float* p);
  ~DnnlRnn();
  // x [T, N, I]; h0, c0 [D, N, H] or null (zeros); y [T, D, N, H], yh, yc [D, N, H],
  // each may be null.
  void run(int64_t steps, int64_t batch, const float* x, const float* h0, const float* c0, float* y,
           float* yh, float* yc);

 private:
  struct Prepared;
  Prepared& prepared(int64_t steps, int64_t batch);

  DnnlRnnConfig cfg_;
  std::vector<float> w_, r_, b_, p_;  // oneDNN's ldigo / ldgo plain layouts
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<Prepared>> cache_;
};

}  // namespace fx
