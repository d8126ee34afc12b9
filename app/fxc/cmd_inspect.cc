// SPDX-License-Identifier: Apache-2.0
// fxc inspect: what a model holds, before any analysis.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "ir/graph.h"
#include "model_options.h"
#include "onnx/model_loader.h"
#include "util/stopwatch.h"

namespace fxc {
namespace {

struct InspectOptions {
  std::string model;
  ModelOptions mo;
  bool json = false;
};

nlohmann::json shape_json(const fx::Shape& s) {
  if (!s.rank_known()) return nullptr;
  auto arr = nlohmann::json::array();
  for (const auto& d : s.dims()) {
    if (d.is_static())
      arr.push_back(d.value);
    else if (!d.symbol.empty())
      arr.push_back(d.symbol);
    else
      arr.push_back(nullptr);
  }
  return arr;
}

nlohmann::json io_json(const fx::Graph& g, const std::vector<fx::ValueId>& ids) {
  auto arr = nlohmann::json::array();
  for (auto id : ids) {
    const auto& v = g.value(id);
    arr.push_back({{"name", v.name},
                   {"dtype", std::string(fx::dtype_name(v.dtype))},
                   {"shape", shape_json(v.shape)}});
  }
  return arr;
}

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

int run_inspect(const InspectOptions& o) {
  fx::Stopwatch total;
  auto m = load_model(o.model, o.mo);
  const fx::Graph& g = m.graph;

  std::map<std::string, int> ops;
  for (const auto& n : g.nodes()) ops[n.qualified_op()]++;
  auto inputs = g.runtime_inputs();

  if (o.json) {
    nlohmann::json j;
    j["model"] = o.model;
    j["nodes"] = g.node_count();
    j["ops"] = ops;
    j["inputs"] = io_json(g, inputs);
    j["outputs"] = io_json(g, g.outputs());
    j["parameter_bytes"] = g.parameter_bytes();
    j["activation_bytes"] = g.activation_bytes();
    j["unknown_shape_nodes"] = m.info.unknown_shape_nodes;
    j["ir_version"] = m.info.ir_version;
    j["producer"] = m.info.producer_name + " " + m.info.producer_version;
    auto opsets = nlohmann::json::object();
    for (const auto& [d, v] : m.info.opsets) opsets[d] = v;
    j["opsets"] = opsets;
    j["load_ms"] = m.info.load_ms;
    j["shape_inference_ms"] = m.info.shape_inference_ms;
    j.update(model_header_json(m));
    j["total_ms"] = total.elapsed_ms();
    fmt::print("{}\n", j.dump(2));
    return 0;
  }

  fmt::print("Model        {}\n", o.model);
  fmt::print("Producer     {} {} (IR v{})\n", m.info.producer_name, m.info.producer_version,
             m.info.ir_version);
  std::string opsets;
  for (const auto& [d, v] : m.info.opsets)
    opsets += fmt::format("{}{} v{}", opsets.empty() ? "" : ", ", d, v);
  fmt::print("Opsets       {}\n", opsets);
  fmt::print("Nodes        {} ({} op types)\n", g.node_count(), ops.size());
  fmt::print("Canonical    {}\n", m.canonical.summary().substr(std::string("canonical: ").size()));
  // What the canonical form folded into another node, by name (conv-bn-folding).
  for (const auto& p : m.canonical.passes) {
    int shown = 0;
    for (const auto& [removed, into] : p.folded_into) {
      if (shown++ == 8) {
        fmt::print("             ... {} more ({})\n", p.folded_into.size() - 8, p.pass);
        break;
      }
      fmt::print("Folded       {} into {} ({})\n", removed, into, p.pass);
    }
  }
  if (!m.assumed_dims.empty())
    fmt::print("Dims         {}\n", fx::transforms::assumed_dims_text(m.assumed_dims));
  fmt::print("Parameters   {} ({} bytes)\n", human_bytes(g.parameter_bytes()), g.parameter_bytes());
  fmt::print("Activations  {} (sum of all intermediate tensors)\n",
             human_bytes(g.activation_bytes()));
  if (m.info.unknown_shape_nodes)
    fmt::print("Unknown      {} nodes whose output shapes could not be inferred\n",
               m.info.unknown_shape_nodes);
  fmt::print("Load         {:.1f} ms, shape inference {:.1f} ms\n\n", m.info.load_ms,
             m.info.shape_inference_ms);
  auto print_io = [&](const char* title, const std::vector<fx::ValueId>& ids) {
    fmt::print("{}\n", title);
    for (auto id : ids) {
      const auto& v = g.value(id);
      fmt::print("  {:<32} {:<8} {}\n", v.name, fx::dtype_name(v.dtype), v.shape.str());
    }
  };
  print_io("Inputs", inputs);
  print_io("Outputs", g.outputs());
  std::vector<std::pair<std::string, int>> sorted(ops.begin(), ops.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  fmt::print("\nOp histogram\n");
  for (const auto& [op, count] : sorted)
    fmt::print("  {:<28} {:>6}  {:>5.1f}%\n", op, count,
               100.0 * count / std::max<std::size_t>(1, g.node_count()));
  return 0;
}

}  // namespace

void register_inspect(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect", "Summarize a model: ops, parameters, inputs, outputs");
  cmd->add_option("model", opts->model, "ONNX model file")->required();
  add_model_options(cmd, opts->mo);
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of text");
  cmd->footer(
      "Examples:\n"
      "  fxc inspect resources/models/tiny_cnn.onnx\n"
      "  fxc inspect gpt2.onnx --dim batch=1 --dim seq=128 --json");
  cmd->callback([opts, &run] { run = [opts] { return run_inspect(*opts); }; });
}

}  // namespace fxc
