// SPDX-License-Identifier: Apache-2.0
#include "ir/attribute.h"

#include <sstream>

namespace fx {

const AttributeValue* Attributes::find(const std::string& name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

int64_t Attributes::get_int(const std::string& name, int64_t def) const {
  if (auto* v = find(name)) {
    if (auto* i = std::get_if<int64_t>(v)) return *i;
    if (auto* f = std::get_if<float>(v)) return static_cast<int64_t>(*f);
  }
  return def;
}

float Attributes::get_float(const std::string& name, float def) const {
  if (auto* v = find(name)) {
    if (auto* f = std::get_if<float>(v)) return *f;
    if (auto* i = std::get_if<int64_t>(v)) return static_cast<float>(*i);
  }
  return def;
}

std::string Attributes::get_string(const std::string& name, const std::string& def) const {
  if (auto* v = find(name))
    if (auto* s = std::get_if<std::string>(v)) return *s;
  return def;
}

std::vector<int64_t> Attributes::get_ints(const std::string& name,
                                          const std::vector<int64_t>& def) const {
  if (auto* v = find(name))
    if (auto* s = std::get_if<std::vector<int64_t>>(v)) return *s;
  return def;
}

std::vector<float> Attributes::get_floats(const std::string& name) const {
  if (auto* v = find(name))
    if (auto* s = std::get_if<std::vector<float>>(v)) return *s;
  return {};
}

std::shared_ptr<TensorData> Attributes::get_tensor(const std::string& name) const {
  if (auto* v = find(name))
    if (auto* t = std::get_if<std::shared_ptr<TensorData>>(v)) return *t;
  return nullptr;
}

namespace {
template <class T>
std::string join(const std::vector<T>& xs) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < xs.size(); ++i) os << (i ? "," : "") << xs[i];
  os << ']';
  return os.str();
}
}  // namespace

std::string attribute_to_string(const AttributeValue& v) {
  struct Visitor {
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(float f) const {
      std::ostringstream os;
      os << f;
      return os.str();
    }
    std::string operator()(const std::string& s) const { return '"' + s + '"'; }
    std::string operator()(const std::vector<int64_t>& xs) const { return join(xs); }
    std::string operator()(const std::vector<float>& xs) const { return join(xs); }
    std::string operator()(const std::vector<std::string>& xs) const { return join(xs); }
    std::string operator()(const std::shared_ptr<TensorData>& t) const {
      if (!t) return "tensor<?>";
      std::string s = "tensor<" + std::string(dtype_name(t->dtype())) + join(t->dims()) + ">";
      if (t->numel() == 1 && dtype_size(t->dtype()) > 0) {
        auto f = t->to_floats();
        if (!f.empty()) s += " = " + operator()(f[0]);
      }
      return s;
    }
    std::string operator()(const SubgraphRef& g) const {
      return "graph '" + g.name + "' (" + std::to_string(g.node_count) + " nodes)";
    }
  };
  return std::visit(Visitor{}, v);
}

}  // namespace fx
