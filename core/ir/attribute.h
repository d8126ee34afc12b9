// SPDX-License-Identifier: Apache-2.0
#pragma once
// Node attributes. A graph attribute (If's branches, Loop's and Scan's body) holds
// the imported subgraph itself (see ir/subgraph.h for how it reads the values of the
// enclosing graph); export rewrites the source model, so subgraphs go back unchanged.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor_data.h"

namespace fx {

class Graph;

struct SubgraphRef {
  std::string name;
  int64_t node_count = 0;  // nodes of the subgraph and of the subgraphs nested in it
  // The subgraph, shared by the copies of the node; null for a GRAPHS attribute
  // (a list of graphs, which no default-domain op has).
  std::shared_ptr<const Graph> graph;
  bool operator==(const SubgraphRef&) const = default;
};

using AttributeValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                 std::vector<std::string>, std::shared_ptr<TensorData>, SubgraphRef>;

class Attributes {
 public:
  void set(const std::string& name, AttributeValue v) { map_[name] = std::move(v); }
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  const AttributeValue* find(const std::string& name) const;
  const std::map<std::string, AttributeValue>& all() const { return map_; }
  std::size_t size() const { return map_.size(); }

  // Typed getters with a default when absent (or of another type).
  int64_t get_int(const std::string& name, int64_t def) const;
  float get_float(const std::string& name, float def) const;
  std::string get_string(const std::string& name, const std::string& def = {}) const;
  std::vector<int64_t> get_ints(const std::string& name,
                                const std::vector<int64_t>& def = {}) const;
  std::vector<float> get_floats(const std::string& name) const;
  std::shared_ptr<TensorData> get_tensor(const std::string& name) const;

 private:
  std::map<std::string, AttributeValue> map_;
};

// Human-readable rendering for inspectors and dumps ("[1,1]", "0.5", "tensor<float32[64]>").
std::string attribute_to_string(const AttributeValue& v);

}  // namespace fx
