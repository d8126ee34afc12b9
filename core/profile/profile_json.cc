// SPDX-License-Identifier: Apache-2.0
#include "profile/profile_json.h"

#include <algorithm>

#include "profile/chrome_trace.h"
#include "util/error.h"

namespace fx {
namespace {

using nlohmann::json;

const json& field(const json& obj, const char* key, const std::string& origin) {
  auto it = obj.find(key);
  if (it == obj.end()) throw FileError(origin, std::string("missing \"") + key + "\"");
  return *it;
}

template <class T>
T get(const json& obj, const char* key, const std::string& origin) {
  try {
    return field(obj, key, origin).get<T>();
  } catch (const json::exception& e) {
    throw FileError(origin, std::string("bad \"") + key + "\": " + e.what());
  }
}

}  // namespace

nlohmann::json kernel_stats_json(const std::vector<KernelStats>& kernels) {
  json list = json::array();
  for (const auto& k : kernels) {
    json j = {{"name", k.name},
              {"op_types", k.op_types},
              {"nodes", k.nodes},
              {"calls", k.calls},
              {"median_us", k.median_us},
              {"min_us", k.min_us},
              {"max_us", k.max_us},
              {"share", k.share},
              {"bytes_read", k.bytes_read},
              {"bytes_written", k.bytes_written},
              {"flops", k.flops},
              {"gb_per_s", k.gb_per_s()},
              {"gflop_per_s", k.gflop_per_s()}};
    j["q1_us"] = k.q1_us;  // quartiles over runs: how far the median can be trusted
    j["q3_us"] = k.q3_us;
    if (k.group_id) j["group_id"] = *k.group_id;
    list.push_back(std::move(j));
  }
  return list;
}

std::vector<KernelStats> kernel_stats_from_json(const nlohmann::json& list,
                                                const std::string& origin) {
  if (!list.is_array()) throw FileError(origin, "\"kernels\" is not a list");
  std::vector<KernelStats> out;
  for (const auto& j : list) {
    if (!j.is_object()) throw FileError(origin, "a \"kernels\" entry is not an object");
    KernelStats k;
    k.name = get<std::string>(j, "name", origin);
    k.op_types = get<std::vector<std::string>>(j, "op_types", origin);
    k.nodes = get<std::vector<std::string>>(j, "nodes", origin);
    if (j.contains("group_id")) k.group_id = get<int>(j, "group_id", origin);
    k.calls = get<int>(j, "calls", origin);
    k.median_us = get<double>(j, "median_us", origin);
    k.min_us = get<double>(j, "min_us", origin);
    k.max_us = get<double>(j, "max_us", origin);
    k.q1_us = j.value("q1_us", k.min_us);  // older results: no quartiles
    k.q3_us = j.value("q3_us", k.max_us);
    k.share = get<double>(j, "share", origin);
    k.bytes_read = get<int64_t>(j, "bytes_read", origin);
    k.bytes_written = get<int64_t>(j, "bytes_written", origin);
    k.flops = get<int64_t>(j, "flops", origin);
    out.push_back(std::move(k));
  }
  return out;
}

nlohmann::json profile_result_json(const ProfileResult& r) {
  json j;
  j["device"] = r.device;
  j["threads"] = r.threads;
  j["runs"] = r.runs;
  j["warmup"] = r.warmup;
  j["median_ms"] = r.median_ms;
  j["min_ms"] = r.run_ms.empty() ? 0.0 : *std::min_element(r.run_ms.begin(), r.run_ms.end());
  j["max_ms"] = r.run_ms.empty() ? 0.0 : *std::max_element(r.run_ms.begin(), r.run_ms.end());
  j["run_ms"] = r.run_ms;
  j["peak_activation_bytes"] = r.peak_activation_bytes;
  j["total_activation_bytes"] = r.total_activation_bytes;
  j["kernels"] = kernel_stats_json(r.kernels);
  j["trace"] = to_chrome_trace(r.representative_timeline());
  return j;
}

ProfileResult profile_result_from_json(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object()) throw FileError(origin, "a profile result must be a JSON object");
  ProfileResult r;
  r.device = get<std::string>(doc, "device", origin);
  r.threads = get<int>(doc, "threads", origin);
  r.runs = get<int>(doc, "runs", origin);
  r.warmup = get<int>(doc, "warmup", origin);
  r.median_ms = get<double>(doc, "median_ms", origin);
  r.run_ms = get<std::vector<double>>(doc, "run_ms", origin);
  r.peak_activation_bytes = get<int64_t>(doc, "peak_activation_bytes", origin);
  r.total_activation_bytes = get<int64_t>(doc, "total_activation_bytes", origin);
  r.kernels = kernel_stats_from_json(field(doc, "kernels", origin), origin);
  if (doc.contains("trace")) r.timeline = parse_trace(doc["trace"], origin);
  return r;
}

nlohmann::json kernel_comparison_json(const std::vector<KernelComparison>& rows) {
  json list = json::array();
  for (const auto& r : rows)
    list.push_back({{"kernels_a", r.kernels_a},
                    {"kernels_b", r.kernels_b},
                    {"op_types", r.op_types},
                    {"a_us", r.a_us},
                    {"b_us", r.b_us},
                    {"ratio", r.ratio()}});
  return list;
}

}  // namespace fx
