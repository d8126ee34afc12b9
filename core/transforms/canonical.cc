// SPDX-License-Identifier: Apache-2.0
#include "transforms/canonical.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "transforms/canonical_passes.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace fx::transforms {
namespace {

constexpr const char* kConvBnFolding = "conv-bn-folding";

struct PassEntry {
  const char* name;
  Graph (*run)(const Graph&, PassRecord&);
  bool renames;  // removes or renames values: unsafe when subgraphs may read them by name
};

const std::vector<PassEntry>& passes() {
  static const std::vector<PassEntry> p = {
      {"constant-to-initializer", constant_to_initializer, false},
      {"half-to-float", half_to_float, false},
      {"identity-elimination", identity_elimination, true},
      {"shape-folding", shape_folding, false},
      {"constant-folding", constant_folding, false},
      {"conv-bn-folding", conv_bn_folding, true},
      {"dead-nodes", dead_node_elimination, true},
      {"duplicate-initializers", merge_duplicate_initializers, true},
  };
  return p;
}

std::string bytes_text(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string ops_text(const std::map<std::string, int>& ops) {
  std::vector<std::pair<std::string, int>> v(ops.begin(), ops.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 4; ++i)
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", v[i].first, v[i].second);
  if (v.size() > 4) s += ", ...";
  return s;
}

}  // namespace

const std::vector<std::string>& canonical_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& p : passes()) n.push_back(p.name);
    return n;
  }();
  return names;
}

bool has_subgraph(const Node& n) {
  for (const auto& [name, value] : n.attrs.all())
    if (std::holds_alternative<SubgraphRef>(value)) return true;
  return n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan";
}

void check_pass_names(const CanonicalOptions& options) {
  const auto& known = canonical_pass_names();
  for (const auto& d : options.disabled)
    if (std::find(known.begin(), known.end(), d) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error("no canonical pass named '" + d + "' (passes: " + list + ")");
    }
}

Graph canonicalize(const Graph& g, const CanonicalOptions& options, CanonicalRecord* record) {
  check_pass_names(options);
  Stopwatch clock;
  CanonicalRecord rec;
  rec.enabled = options.enabled;
  rec.nodes_before = int(g.node_count());
  Graph cur = g;
  bool subgraphs = false;
  for (const auto& n : g.nodes()) subgraphs = subgraphs || has_subgraph(n);
  for (const auto& p : passes()) {
    PassRecord pr;
    pr.pass = p.name;
    if (!options.enabled)
      pr.skipped_because = "canonicalization off";
    else if (options.disabled.count(p.name))
      pr.skipped_because = "disabled";
    else if (subgraphs && p.renames)
      pr.skipped_because = "graph has subgraphs";
    if (pr.skipped_because.empty()) {
      pr.ran = true;
      cur = p.run(cur, pr);
    }
    rec.passes.push_back(std::move(pr));
  }
  if (options.enabled) {
    try {
      cur.validate();
    } catch (const Error& e) {
      // A pass bug must not cost the user their model: keep the graph as imported.
      spdlog::error(
          "canonicalization produced an invalid graph ({}); using the model as "
          "imported",
          e.what());
      cur = g;
      rec.enabled = false;
    }
    if (rec.enabled) cur.derive_scopes();
  }
  rec.nodes_after = int(cur.node_count());
  rec.ms = clock.elapsed_ms();
  if (record) *record = std::move(rec);
  return cur;
}

std::string CanonicalRecord::summary() const {
  if (!enabled) return "canonical: off (the graph as imported)";
  std::vector<std::string> parts, disabled;
  for (const auto& p : passes) {
    if (p.skipped_because == "disabled") disabled.push_back(p.pass);
    if (!p.ran) continue;
    if (p.pass == "constant-to-initializer" && p.nodes_removed)
      parts.push_back(fmt::format("{} Constant -> initializers ({})", p.nodes_removed,
                                  bytes_text(p.weight_bytes)));
    else if (p.pass == "half-to-float" && p.widened)
      parts.push_back(fmt::format("{} float16 tensors computed as float32", p.widened));
    else if (p.pass == "identity-elimination" && p.nodes_removed)
      parts.push_back(
          fmt::format("removed {} Identity ({} on weights)", p.nodes_removed, p.weights.size()));
    else if (p.pass == "shape-folding" && p.nodes_removed)
      parts.push_back(fmt::format("{} Shape/Size of known shapes folded", p.nodes_removed));
    else if (p.pass == "constant-folding" && p.nodes_removed)
      parts.push_back(
          fmt::format("{} constant nodes folded ({})", p.nodes_removed, ops_text(p.removed_ops)));
    else if (p.pass == kConvBnFolding && p.nodes_removed)
      parts.push_back(fmt::format("{} BatchNormalization folded into Conv", p.nodes_removed));
    else if (p.pass == "dead-nodes" && p.nodes_removed)
      parts.push_back(fmt::format("{} dead nodes", p.nodes_removed));
    else if (p.pass == "duplicate-initializers" && p.merged)
      parts.push_back(fmt::format("{} duplicate initializers merged", p.merged));
  }
  std::string s = "canonical: ";
  if (parts.empty()) {
    s += "nothing to fold";
  } else {
    for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  }
  s += fmt::format("; {} -> {} nodes", nodes_before, nodes_after);
  if (!disabled.empty()) {
    s += " (disabled:";
    for (const auto& d : disabled) s += " " + d;
    s += ")";
  }
  return s;
}

}  // namespace fx::transforms
