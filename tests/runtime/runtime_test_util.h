// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers for runtime tests: run one op on given tensors, compare with expected values.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"

namespace fx::test {

// Runs a one-node graph; inputs listed in `constant` (by index) become
// initializers instead of graph inputs. A default Tensor stands for an omitted input.
inline std::vector<Tensor> run_op(const std::string& op, const std::vector<Tensor>& inputs,
                                  const GraphBuilder::AttrList& attrs = {}, int num_outputs = 1,
                                  const std::vector<int>& constant = {}, int threads = 2) {
  GraphBuilder b;
  std::vector<ValueId> ids;
  std::map<std::string, Tensor> feeds;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    std::string name = "in" + std::to_string(i);
    if (!t.defined()) {
      ids.push_back(kNoValue);
    } else if (std::find(constant.begin(), constant.end(), static_cast<int>(i)) != constant.end()) {
      ids.push_back(b.constant(name, t.to_tensor_data()));
    } else {
      ids.push_back(b.input(name, t.dims(), t.dtype()));
      feeds[name] = t;
    }
  }
  auto outs = b.op_multi(op, ids, num_outputs, attrs, "node");
  for (ValueId o : outs) b.output(o);
  Graph g = b.build();
  Executor ex(g, ExecutorOptions{threads});
  return ex.run(feeds);
}

// `count` values uniform in [-1, 1), the same for the same seed.
inline std::vector<float> random_floats(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (auto& e : v) e = d(rng);
  return v;
}

inline Tensor floats(std::vector<int64_t> dims, std::vector<float> v) {
  return Tensor::from_floats(std::move(dims), v);
}
inline Tensor int64s(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::from_int64s(std::move(dims), v);
}

MATCHER_P(FloatsNear, expected, "") {
  std::vector<float> got = arg.to_floats();
  if (got.size() != expected.size()) {
    *result_listener << "size " << got.size() << " vs " << expected.size();
    return false;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - expected[i]) > 1e-5f + 1e-4f * std::abs(expected[i])) {
      *result_listener << "element " << i << ": " << got[i] << " vs " << expected[i];
      return false;
    }
  }
  return true;
}

}  // namespace fx::test
