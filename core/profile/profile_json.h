// SPDX-License-Identifier: Apache-2.0
#pragma once
// ProfileResult as JSON: what `fxc profile --json` prints and what a parent process
// (the CLI without --in-process, the GUI) reads back from its profiling child.
//
//   {"device", "threads", "runs", "warmup", "median_ms", "min_ms", "max_ms", "run_ms",
//    "peak_activation_bytes", "total_activation_bytes",
//    "kernels": [{"name", "op_types", "nodes", "group_id"?, "calls", "median_us",
//                 "min_us", "max_us", "share", "bytes_read", "bytes_written", "flops",
//                 "gb_per_s", "gflop_per_s"}],
//    "trace": <Chrome trace of the representative run>}

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profile/kernel_comparison.h"
#include "profile/profiler.h"
#include "profile/timeline.h"

namespace fx {

nlohmann::json kernel_stats_json(const std::vector<KernelStats>& kernels);
// Throws FileError(origin, ...) when an entry lacks a field or has the wrong type.
std::vector<KernelStats> kernel_stats_from_json(const nlohmann::json& list,
                                                const std::string& origin);

nlohmann::json profile_result_json(const ProfileResult& result);
// Everything but the tensors (inputs, outputs), which do not travel; `timeline`
// holds the representative run only.
ProfileResult profile_result_from_json(const nlohmann::json& doc, const std::string& origin);

// [{"kernels_a", "kernels_b", "op_types", "a_us", "b_us", "ratio"}]
nlohmann::json kernel_comparison_json(const std::vector<KernelComparison>& rows);

}  // namespace fx
