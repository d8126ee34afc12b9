// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernel_util.h"

namespace fx {

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    throw Error("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_dims(const std::vector<const std::vector<int64_t>*>& shapes) {
  std::size_t rank = 0;
  for (auto* s : shapes) rank = std::max(rank, s->size());
  std::vector<int64_t> out(rank, 1);
  for (auto* s : shapes) {
    std::size_t off = rank - s->size();
    for (std::size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[i], &o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string msg = "shapes cannot broadcast:";
      for (auto* x : shapes) msg.append(" ").append(dims_str(*x));  // see broadcast.h
      throw Error(msg);
    }
  }
  return out;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::optional<Tensor> constant_input(const Graph& graph, const Node& node, std::size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return std::nullopt;
  const Value& v = graph.value(node.inputs[i]);
  if (!v.is_constant() || v.producer != kNoNode) return std::nullopt;
  return Tensor::from_data(v.data);
}

std::vector<int64_t> ints_of(const Tensor* t) {
  if (!t) return {};
  return t->to_int64s();
}

}  // namespace fx
