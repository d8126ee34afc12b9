// SPDX-License-Identifier: Apache-2.0
// Chrome Trace Event export. Import lives in chrome_trace_import.cc.

#include "profile/chrome_trace.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"

namespace fx {
namespace {

using nlohmann::json;

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

json event_args(const KernelEvent& e, bool with_run) {
  json args = json::object();
  args["op_types"] = e.op_types;
  args["nodes"] = e.nodes;
  args["bytes_read"] = e.bytes_read;
  args["bytes_written"] = e.bytes_written;
  args["flops"] = e.flops;
  if (e.group_id) args["group_id"] = *e.group_id;
  if (with_run) args["run"] = e.run;
  for (const auto& [k, v] : e.args) args[k] = v;
  return args;
}

void append_timeline(json& events, const Timeline& t, int pid) {
  std::string process = t.source.empty() ? "timeline" : t.source;
  if (!t.device.empty()) process += " (" + t.device + ")";
  events.push_back(metadata("process_name", pid, 0, process));
  events.push_back({{"ph", "M"},
                    {"name", "process_sort_index"},
                    {"pid", pid},
                    {"tid", 0},
                    {"args", {{"sort_index", pid}}}});

  std::set<int> lanes;
  for (const auto& e : t.events) lanes.insert(e.lane);
  for (int lane : lanes) {
    auto it = t.lane_names.find(lane);
    std::string name = it != t.lane_names.end() ? it->second : "lane " + std::to_string(lane);
    // tid 0 is reserved for process-level metadata in some viewers: lanes start at 1.
    events.push_back(metadata("thread_name", pid, lane + 1, name));
  }

  const bool with_run = t.run_count() > 1;
  for (const auto& e : t.events) {
    events.push_back({{"name", e.name},
                      {"cat", e.op_types.empty() ? std::string("kernel") : join(e.op_types, "+")},
                      {"ph", "X"},
                      {"ts", e.start_us},
                      {"dur", e.duration_us},
                      {"pid", pid},
                      {"tid", e.lane + 1},
                      {"args", event_args(e, with_run)}});
  }
}

}  // namespace

nlohmann::json to_chrome_trace(const std::vector<const Timeline*>& timelines) {
  json events = json::array();
  int pid = 1;
  for (const Timeline* t : timelines) append_timeline(events, *t, pid++);
  json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  // Source and device of a single timeline, so that import restores them.
  if (timelines.size() == 1)
    doc["otherData"] = {{"generator", "fusion-explorer"},
                        {"source", timelines[0]->source},
                        {"device", timelines[0]->device}};
  else
    doc["otherData"] = {{"generator", "fusion-explorer"}};
  return doc;
}

nlohmann::json to_chrome_trace(const Timeline& timeline) {
  return to_chrome_trace({&timeline});
}

void write_chrome_trace(const std::string& path, const std::vector<const Timeline*>& timelines) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FileError(path, std::string("cannot write trace: ") + std::strerror(errno));
  out << to_chrome_trace(timelines).dump() << '\n';
  out.flush();
  if (!out) throw FileError(path, "cannot write trace: write failed");
}

void write_chrome_trace(const std::string& path, const Timeline& timeline) {
  write_chrome_trace(path, std::vector<const Timeline*>{&timeline});
}

}  // namespace fx
