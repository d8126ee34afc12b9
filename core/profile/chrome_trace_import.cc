// SPDX-License-Identifier: Apache-2.0
// Chrome trace and ONNX Runtime profile import (see chrome_trace.h for the rules).

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "profile/chrome_trace.h"
#include "profile/flop_counter.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fx {
namespace {

using nlohmann::json;
using ThreadKey = std::pair<int64_t, int64_t>;  // (pid, tid)

constexpr const char* kKernelSuffix = "_kernel_time";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string str_field(const json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// pid and tid are integers in Chrome traces, but some tools write strings.
int64_t id_field(const json& e, const char* key) {
  auto it = e.find(key);
  if (it == e.end()) return 0;
  if (it->is_number()) return it->get<int64_t>();
  if (it->is_string())
    return static_cast<int64_t>(std::hash<std::string>{}(it->get<std::string>()) >> 1);
  return 0;
}

// ONNX Runtime writes sizes as decimal strings; other tools as numbers.
int64_t int_arg(const json& v) {
  if (v.is_number()) return v.get<int64_t>();
  if (v.is_string()) {
    try {
      return std::stoll(v.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return 0;
}

// ONNX Runtime's [{"float": [1, 3, 224, 224]}, ...] as a list of dims.
DimsList ort_dims(const json& list) {
  DimsList out;
  if (!list.is_array()) return out;
  for (const auto& entry : list) {
    std::vector<int64_t> dims;
    if (entry.is_object() && !entry.empty() && entry.begin()->is_array())
      for (const auto& d : *entry.begin())
        if (d.is_number_integer()) dims.push_back(d.get<int64_t>());
    out.push_back(std::move(dims));
  }
  return out;
}

std::string arg_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

struct Parser {
  explicit Parser(const std::string& o) : origin(o) {}
  const std::string& origin;
  bool ort = false;
  std::vector<KernelEvent> events;
  std::vector<ThreadKey> event_threads;             // parallel to events
  std::vector<std::pair<double, double>> ort_runs;  // model_run [start, end)
  std::map<ThreadKey, std::string> thread_names;
  std::map<int64_t, std::string> process_names;
  std::map<ThreadKey, std::vector<json>> open;  // B events awaiting their E

  [[noreturn]] void fail(std::size_t i, const json& e, const std::string& cause) const {
    std::string name = e.is_object() ? str_field(e, "name") : std::string();
    throw FileError(origin, "event " + std::to_string(i) +
                                (name.empty() ? "" : " (\"" + name + "\")") + ": " + cause);
  }

  double number(std::size_t i, const json& e, const char* key) const {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number())
      fail(i, e, std::string("missing numeric \"") + key + "\"");
    return it->get<double>();
  }

  void add(std::size_t i, const json& e, double ts, double dur) {
    if (dur < 0) fail(i, e, "negative duration");
    KernelEvent k;
    k.name = str_field(e, "name");
    k.start_us = ts;
    k.duration_us = dur;
    const json args = e.contains("args") && e["args"].is_object() ? e["args"] : json::object();
    for (auto it = args.begin(); it != args.end(); ++it) {
      const std::string& key = it.key();
      const json& v = it.value();
      if (key == "op_types" && v.is_array()) {
        for (const auto& t : v)
          if (t.is_string()) k.op_types.push_back(t.get<std::string>());
      } else if (key == "nodes" && v.is_array()) {
        for (const auto& n : v)
          if (n.is_string()) k.nodes.push_back(n.get<std::string>());
      } else if ((key == "op_name" || key == "op_type") && v.is_string()) {
        k.op_types.push_back(v.get<std::string>());
      } else if (key == "bytes_read") {
        k.bytes_read = int_arg(v);
      } else if (key == "bytes_written") {
        k.bytes_written = int_arg(v);
      } else if (key == "flops") {
        k.flops = int_arg(v);
      } else if (key == "group_id" && v.is_number_integer()) {
        k.group_id = v.get<int>();
      } else if (key == "run" && v.is_number_integer()) {
        k.run = v.get<int>();
      } else {
        k.args[key] = arg_text(v);
      }
    }
    if (ort) {
      // "<node>_kernel_time" with sizes of the inputs that are activations, the
      // inputs that are parameters, and the outputs.
      k.name.resize(k.name.size() - std::strlen(kKernelSuffix));
      k.nodes = {k.name};
      if (args.contains("activation_size")) k.bytes_read += int_arg(args["activation_size"]);
      if (args.contains("parameter_size")) k.bytes_read += int_arg(args["parameter_size"]);
      if (args.contains("output_size")) k.bytes_written = int_arg(args["output_size"]);
      // No attributes travel, so ops whose count needs them (pool windows, Gemm's
      // transA) may count 0 or approximately; Conv, MatMul and elementwise are exact.
      if (!k.op_types.empty() && args.contains("input_type_shape"))
        k.flops = count_flops(k.op_types[0], Attributes{}, ort_dims(args["input_type_shape"]),
                              ort_dims(args.value("output_type_shape", json::array())));
    }
    // The category is kept unless it only repeats the op types (our own export).
    std::string ops;
    for (const auto& t : k.op_types) ops += (ops.empty() ? "" : "+") + t;
    const std::string cat = str_field(e, "cat");
    if (!cat.empty() && !ort && !k.args.count("cat") && cat != "kernel" && cat != ops)
      k.args["cat"] = cat;
    events.push_back(std::move(k));
    event_threads.push_back({id_field(e, "pid"), id_field(e, "tid")});
  }

  void visit(std::size_t i, const json& e) {
    if (!e.is_object()) fail(i, e, "not a JSON object");
    if (!e.contains("ph") || !e["ph"].is_string()) fail(i, e, "missing \"ph\" (event phase)");
    const std::string ph = e["ph"].get<std::string>();
    const ThreadKey key{id_field(e, "pid"), id_field(e, "tid")};
    if (ph == "M") {
      const std::string what = str_field(e, "name");
      std::string name =
          e.contains("args") && e["args"].is_object() ? str_field(e["args"], "name") : "";
      if (what == "thread_name") thread_names[key] = name;
      if (what == "process_name") process_names[key.first] = name;
      return;
    }
    const std::string name = str_field(e, "name");
    if (ort) {
      const std::string cat = str_field(e, "cat");
      if (cat == "Session") {
        if (name == "model_run" && ph == "X") {
          double ts = number(i, e, "ts");
          ort_runs.push_back({ts, ts + number(i, e, "dur")});
        }
        return;
      }
      // Fence events (and anything else that is not a kernel's time) are skipped.
      if (cat != "Node" || !ends_with(name, kKernelSuffix)) return;
    }
    if (ph == "X") {
      add(i, e, number(i, e, "ts"), e.contains("dur") ? number(i, e, "dur") : 0.0);
    } else if (ph == "B") {
      number(i, e, "ts");
      open[key].push_back(e);
    } else if (ph == "E") {
      auto& stack = open[key];
      if (stack.empty()) fail(i, e, "\"E\" without a matching \"B\" on the same pid/tid");
      json begin = std::move(stack.back());
      stack.pop_back();
      // E may carry args that complete the B's.
      if (e.contains("args") && e["args"].is_object()) {
        if (!begin.contains("args") || !begin["args"].is_object()) begin["args"] = json::object();
        begin["args"].update(e["args"]);
      }
      const double ts = begin["ts"].get<double>();
      add(i, begin, ts, number(i, e, "ts") - ts);
    }
    // Instant, counter, async, flow and sample events carry no kernel time.
  }
};

// Timeline source: what the file says about itself, else what it looks like.
void describe(Timeline& t, const json& doc, const Parser& p) {
  t.source = p.ort ? "onnxruntime profile" : "chrome trace";
  if (doc.is_object() && doc.contains("otherData") && doc["otherData"].is_object()) {
    const json& other = doc["otherData"];
    if (!str_field(other, "source").empty()) t.source = str_field(other, "source");
    t.device = str_field(other, "device");
  }
  if (t.device.empty() && p.ort && !p.events.empty() && p.events[0].args.count("provider"))
    t.device = p.events[0].args.at("provider");
}

}  // namespace

Timeline parse_trace(const nlohmann::json& doc, const std::string& origin) {
  const json* list = nullptr;
  if (doc.is_array()) list = &doc;
  if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array())
    list = &doc["traceEvents"];
  if (!list)
    throw FileError(origin,
                    "not a Chrome trace: expected a JSON array of events or an object with a "
                    "\"traceEvents\" array");

  Parser p(origin);
  for (const auto& e : *list)
    if (e.is_object() && str_field(e, "cat") == "Node" &&
        ends_with(str_field(e, "name"), kKernelSuffix)) {
      p.ort = true;
      break;
    }
  for (std::size_t i = 0; i < list->size(); ++i) p.visit(i, (*list)[i]);
  for (const auto& [key, stack] : p.open)
    if (!stack.empty())
      spdlog::warn("{}: {} \"B\" event(s) on pid {} tid {} never ended; dropped", origin,
                   stack.size(), key.first, key.second);

  Timeline t;
  describe(t, doc, p);
  // Lanes number the distinct threads in (pid, tid) order, so that a trace we wrote
  // (tid = lane + 1) comes back with its lane numbers.
  std::map<ThreadKey, int> lanes;
  for (const auto& k : p.event_threads) lanes.emplace(k, 0);
  int next = 0;
  for (auto& [k, lane] : lanes) {
    lane = next++;
    auto it = p.thread_names.find(k);
    if (it != p.thread_names.end() && !it->second.empty())
      t.lane_names[lane] = it->second;
    else if (!p.ort)
      t.lane_names[lane] = "pid " + std::to_string(k.first) + " tid " + std::to_string(k.second);
  }
  std::sort(p.ort_runs.begin(), p.ort_runs.end());
  double origin_ts = std::numeric_limits<double>::infinity();
  for (const auto& e : p.events) origin_ts = std::min(origin_ts, e.start_us);
  for (std::size_t i = 0; i < p.events.size(); ++i) {
    KernelEvent& e = p.events[i];
    e.lane = lanes[p.event_threads[i]];
    if (p.ort) {
      // The run is the last model_run that started at or before the event.
      int run = 0;
      for (std::size_t r = 0; r < p.ort_runs.size(); ++r)
        if (p.ort_runs[r].first <= e.start_us) run = static_cast<int>(r);
      e.run = run;
    }
    e.start_us -= origin_ts;
  }
  std::stable_sort(p.events.begin(), p.events.end(), [](const auto& a, const auto& b) {
    return a.run != b.run ? a.run < b.run : a.start_us < b.start_us;
  });
  t.events = std::move(p.events);
  return t;
}

Timeline read_trace(const std::string& path) {
  const json doc = read_json_file(path, "trace");
  try {
    return parse_trace(doc, path);
  } catch (const json::exception& e) {
    throw FileError(path, std::string("unexpected trace content: ") + e.what());
  }
}

}  // namespace fx
