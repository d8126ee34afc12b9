// SPDX-License-Identifier: Apache-2.0
#pragma once
// Chrome Trace Event JSON, the format Perfetto UI and chrome://tracing open, and
// ONNX Runtime's profiler JSON (a Chrome trace with its own conventions), to and
// from Timeline.
//
// Export: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}} with one
// complete event (ph "X", ts/dur in microseconds) per kernel, one process per timeline
// (pid 1, 2, ...; named by process_name metadata) and one thread per lane (thread_name
// metadata). Each event's args carry op_types, nodes, bytes_read, bytes_written, flops,
// group_id and the free-form args, so that import gives the same events back.
//
// Import accepts the JSON array form and the {"traceEvents": [...]} form; complete
// events and B/E pairs; skips instant, counter, flow and async events. An ONNX Runtime
// profile (events with cat "Node" and names "<node>_kernel_time") is read as such:
// Session events are skipped except model_run, which delimits runs; fence events are
// skipped; op_name becomes the op type and activation/parameter/output sizes the bytes.
// Timestamps are re-based so the earliest event starts at 0. Every failure is a
// FileError naming the file and the cause.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "profile/timeline.h"

namespace fx {

// One JSON object holding all timelines (one process each; several timelines, e.g.
// before and after fusion, open side by side in Perfetto).
nlohmann::json to_chrome_trace(const std::vector<const Timeline*>& timelines);
nlohmann::json to_chrome_trace(const Timeline& timeline);

// Writes to_chrome_trace() to a file; FileError when it cannot be written.
void write_chrome_trace(const std::string& path, const std::vector<const Timeline*>& timelines);
void write_chrome_trace(const std::string& path, const Timeline& timeline);

// Parses an already-read JSON document. `origin` names it in error messages (a path).
// Events of all processes are merged into one Timeline; lanes number the distinct
// (pid, tid) pairs in order of appearance.
Timeline parse_trace(const nlohmann::json& doc, const std::string& origin);

// Reads a Chrome trace or ONNX Runtime profile from a file.
Timeline read_trace(const std::string& path);

}  // namespace fx
