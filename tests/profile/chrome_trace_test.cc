// SPDX-License-Identifier: Apache-2.0
#include "profile/chrome_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace fx {
namespace {

using nlohmann::json;

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "fx_profile_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

Timeline sample_timeline() {
  Timeline t;
  t.source = "fusion-explorer cpu";
  t.device = "cpu: 2 threads";
  t.lane_names = {{0, "main"}, {1, "worker"}};
  KernelEvent conv;
  conv.name = "conv1";
  conv.op_types = {"Conv"};
  conv.nodes = {"conv1"};
  conv.start_us = 0;
  conv.duration_us = 120.5;
  conv.bytes_read = 4096;
  conv.bytes_written = 2048;
  conv.flops = 1'000'000;
  conv.args = {{"inputs", "float32[1,3,8,8]"}};
  KernelEvent fused;
  fused.name = "fused_bn_relu";
  fused.op_types = {"BatchNormalization", "Relu"};
  fused.nodes = {"bn1", "relu1"};
  fused.group_id = 7;
  fused.lane = 1;
  fused.start_us = 121;
  fused.duration_us = 30.25;
  fused.bytes_read = 2048;
  fused.bytes_written = 2048;
  t.events = {conv, fused};
  return t;
}

TEST(ChromeTrace, ExportHasCompleteEventsAndNameMetadata) {
  json doc = to_chrome_trace(sample_timeline());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  int x = 0, process_names = 0, thread_names = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      ++x;
      EXPECT_TRUE(e["ts"].is_number());
      EXPECT_TRUE(e["dur"].is_number());
      EXPECT_TRUE(e["pid"].is_number_integer());
      EXPECT_TRUE(e["tid"].is_number_integer());
      EXPECT_TRUE(e["args"].contains("bytes_read"));
    }
    if (e["ph"] == "M" && e["name"] == "process_name") ++process_names;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++thread_names;
  }
  EXPECT_EQ(x, 2);
  EXPECT_EQ(process_names, 1);
  EXPECT_EQ(thread_names, 2);
}

TEST(ChromeTrace, ExportImportRoundTripKeepsEvents) {
  Timeline t = sample_timeline();
  std::string path = temp_path("round_trip.json");
  write_chrome_trace(path, t);
  Timeline back = read_trace(path);
  EXPECT_EQ(back.source, t.source);
  EXPECT_EQ(back.device, t.device);
  EXPECT_EQ(back.lane_names, t.lane_names);
  ASSERT_EQ(back.events.size(), t.events.size());
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const auto &a = t.events[i], &b = back.events[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.op_types, a.op_types);
    EXPECT_EQ(b.nodes, a.nodes);
    EXPECT_EQ(b.group_id, a.group_id);
    EXPECT_EQ(b.lane, a.lane);
    EXPECT_DOUBLE_EQ(b.start_us, a.start_us);
    EXPECT_DOUBLE_EQ(b.duration_us, a.duration_us);
    EXPECT_EQ(b.bytes_read, a.bytes_read);
    EXPECT_EQ(b.bytes_written, a.bytes_written);
    EXPECT_EQ(b.flops, a.flops);
    EXPECT_EQ(b.args, a.args);
  }
}

TEST(ChromeTrace, ImportsArrayFormWithBeginEndPairs) {
  // A bare array, ts not starting at 0, one X event, one nested B/E pair on another
  // thread, an instant event and a counter that carry no kernel time.
  json doc = json::parse(R"([
    {"name": "matmul", "ph": "X", "ts": 1000, "dur": 50, "pid": 7, "tid": 3,
     "args": {"op_type": "MatMul"}},
    {"name": "outer", "ph": "B", "ts": 1010, "pid": 7, "tid": 9},
    {"name": "inner", "ph": "B", "ts": 1020, "pid": 7, "tid": 9},
    {"ph": "E", "ts": 1030, "pid": 7, "tid": 9},
    {"ph": "E", "ts": 1070, "pid": 7, "tid": 9, "args": {"bytes_written": 64}},
    {"name": "mark", "ph": "i", "ts": 1040, "pid": 7, "tid": 3},
    {"name": "mem", "ph": "C", "ts": 1040, "pid": 7, "args": {"v": 1}}
  ])");
  Timeline t = parse_trace(doc, "inline.json");
  EXPECT_EQ(t.source, "chrome trace");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[0].name, "matmul");
  EXPECT_EQ(t.events[0].op_types, std::vector<std::string>{"MatMul"});
  EXPECT_DOUBLE_EQ(t.events[0].start_us, 0);
  EXPECT_EQ(t.events[1].name, "outer");
  EXPECT_DOUBLE_EQ(t.events[1].start_us, 10);
  EXPECT_DOUBLE_EQ(t.events[1].duration_us, 60);
  EXPECT_EQ(t.events[1].bytes_written, 64);
  EXPECT_EQ(t.events[2].name, "inner");
  EXPECT_DOUBLE_EQ(t.events[2].duration_us, 10);
  EXPECT_NE(t.events[0].lane, t.events[1].lane);
  EXPECT_EQ(t.events[1].lane, t.events[2].lane);
}

// Modeled on onnxruntime's profiler output (SessionOptions.enable_profiling): a JSON
// array; Session events for loading, initialization and each model_run; per node a
// fence_before, a kernel_time and a fence_after event with cat "Node".
const char* kOrtProfile = R"([
{"cat" : "Session","pid" :4521,"tid" :4521,"dur" :2214,"ts" :3,"ph" : "X","name" :"model_loading_uri","args" : {}},
{"cat" : "Session","pid" :4521,"tid" :4521,"dur" :5092,"ts" :2250,"ph" : "X","name" :"session_initialization","args" : {}},
{"cat" : "Node","pid" :4521,"tid" :4521,"dur" :0,"ts" :7500,"ph" : "X","name" :"conv1_fence_before","args" : {"op_name" : "Conv"}},
{"cat" : "Node","pid" :4521,"tid" :4521,"dur" :310,"ts" :7501,"ph" : "X","name" :"conv1_kernel_time","args" : {"op_name" : "Conv","provider" : "CPUExecutionProvider","graph_index" : "0","exec_plan_index" : "0","activation_size" : "602112","parameter_size" : "37632","output_size" : "3211264","input_type_shape" : [{"float":[1,3,224,224]},{"float":[64,3,7,7]}],"output_type_shape" : [{"float":[1,64,112,112]}],"thread_scheduling_stats" : {"main_thread" : {"thread_pool_name" : "session-1-intra-op","thread_count" : 2}}}},
{"cat" : "Node","pid" :4521,"tid" :4521,"dur" :0,"ts" :7812,"ph" : "X","name" :"conv1_fence_after","args" : {"op_name" : "Conv"}},
{"cat" : "Node","pid" :4521,"tid" :4521,"dur" :40,"ts" :7813,"ph" : "X","name" :"relu1_kernel_time","args" : {"op_name" : "Relu","provider" : "CPUExecutionProvider","activation_size" : "3211264","parameter_size" : "0","output_size" : "3211264"}},
{"cat" : "Session","pid" :4521,"tid" :4521,"dur" :360,"ts" :7495,"ph" : "X","name" :"SequentialExecutor::Execute","args" : {}},
{"cat" : "Session","pid" :4521,"tid" :4521,"dur" :370,"ts" :7490,"ph" : "X","name" :"model_run","args" : {}},
{"cat" : "Node","pid" :4521,"tid" :4521,"dur" :290,"ts" :8001,"ph" : "X","name" :"conv1_kernel_time","args" : {"op_name" : "Conv","provider" : "CPUExecutionProvider","activation_size" : "602112","parameter_size" : "37632","output_size" : "3211264"}},
{"cat" : "Node","pid" :4521,"tid" :4521,"dur" :44,"ts" :8293,"ph" : "X","name" :"relu1_kernel_time","args" : {"op_name" : "Relu","provider" : "CPUExecutionProvider","activation_size" : "3211264","parameter_size" : "0","output_size" : "3211264"}},
{"cat" : "Session","pid" :4521,"tid" :4521,"dur" :345,"ts" :7995,"ph" : "X","name" :"model_run","args" : {}}
])";

TEST(ChromeTrace, ImportsOnnxRuntimeProfile) {
  std::string path = temp_path("ort_profile.json");
  write_file(path, kOrtProfile);
  Timeline t = read_trace(path);
  EXPECT_EQ(t.source, "onnxruntime profile");
  EXPECT_EQ(t.device, "CPUExecutionProvider");
  ASSERT_EQ(t.events.size(), 4u);  // kernel_time only: no Session, no fences
  EXPECT_EQ(t.run_count(), 2);
  const KernelEvent& conv = t.events[0];
  EXPECT_EQ(conv.name, "conv1");
  EXPECT_EQ(conv.nodes, std::vector<std::string>{"conv1"});
  EXPECT_EQ(conv.op_types, std::vector<std::string>{"Conv"});
  EXPECT_EQ(conv.run, 0);
  EXPECT_DOUBLE_EQ(conv.duration_us, 310);
  EXPECT_EQ(conv.bytes_read, 602112 + 37632);
  EXPECT_EQ(conv.bytes_written, 3211264);
  EXPECT_EQ(conv.args.at("provider"), "CPUExecutionProvider");
  EXPECT_NE(conv.args.at("input_type_shape").find("224"), std::string::npos);
  // FLOPs from the recorded shapes: 64x112x112 outputs, 3x7x7 multiply-adds each.
  EXPECT_EQ(conv.flops, int64_t{2} * 64 * 112 * 112 * 3 * 7 * 7);
  EXPECT_EQ(t.events[2].name, "conv1");
  EXPECT_EQ(t.events[2].run, 1);

  auto rows = aggregate_kernels(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "conv1");
  EXPECT_DOUBLE_EQ(rows[0].median_us, 300);  // (310 + 290) / 2
  EXPECT_EQ(rows[0].calls, 1);
  EXPECT_DOUBLE_EQ(rows[1].median_us, 42);
}

TEST(ChromeTrace, MalformedFilesNameTheFileAndCause) {
  auto message_of = [](const std::string& name, const std::string& text) {
    std::string path = temp_path(name);
    write_file(path, text);
    try {
      read_trace(path);
    } catch (const FileError& e) {
      EXPECT_EQ(e.path(), path);
      return std::string(e.what());
    }
    ADD_FAILURE() << name << " was accepted";
    return std::string();
  };
  EXPECT_NE(message_of("truncated.json", R"([{"ph": "X", "ts": 1,)").find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(message_of("object.json", R"({"events": []})").find("traceEvents"), std::string::npos);
  std::string no_ts = message_of("no_ts.json", R"([{"name": "k", "ph": "X", "dur": 3}])");
  EXPECT_NE(no_ts.find("event 0 (\"k\")"), std::string::npos) << no_ts;
  EXPECT_NE(no_ts.find("\"ts\""), std::string::npos) << no_ts;
  EXPECT_NE(message_of("unmatched.json", R"([{"ph": "E", "ts": 3, "pid": 1, "tid": 1}])")
                .find("without a matching"),
            std::string::npos);
  EXPECT_NE(
      message_of("not_object.json", R"([{"ph": "X", "ts": 0, "dur": 1}, 42])").find("event 1"),
      std::string::npos);
  try {
    read_trace(temp_path("does_not_exist.json"));
    ADD_FAILURE() << "missing file was accepted";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

}  // namespace
}  // namespace fx
