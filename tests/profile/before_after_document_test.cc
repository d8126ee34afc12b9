// SPDX-License-Identifier: Apache-2.0
// The before/after document's one reader against its one writer (before_after_json.h),
// and what it does with files that are truncated or lack a field.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "profile/before_after_document.h"
#include "profile/before_after_json.h"
#include "util/error.h"

namespace fx {
namespace {

KernelStats stats(const std::string& name, std::vector<std::string> nodes, double us) {
  KernelStats k;
  k.name = name;
  k.op_types = std::vector<std::string>(nodes.size(), "Relu");
  k.nodes = std::move(nodes);
  k.calls = 1;
  k.median_us = us, k.min_us = us - 1, k.max_us = us + 1, k.q1_us = us - 0.5, k.q3_us = us + 0.5;
  k.bytes_read = 400, k.bytes_written = 200, k.flops = 100;
  return k;
}

KernelEvent event(const std::string& name, double start, double us) {
  KernelEvent e;
  e.name = name, e.nodes = {name}, e.start_us = start, e.duration_us = us;
  return e;
}

KernelTerms terms(double bytes, bool fused = false) {
  KernelTerms t;
  t.kernel_class = KernelClass::Elementwise;
  t.bytes = bytes, t.flops = bytes / 4, t.launches = 1, t.fused = fused, t.planes = 2;
  return t;
}

// Two Relus before; one fused kernel after; one group fusing them.
BeforeAfterResult result() {
  BeforeAfterResult r;
  r.before.device = "cpu: test";
  r.before.threads = 2, r.before.runs = 3, r.before.warmup = 1;
  r.before.median_ms = 0.5, r.before.run_ms = {0.4, 0.5, 0.6};
  r.before.kernels = {stats("a", {"a"}, 10), stats("b", {"b"}, 20)};
  r.before.timeline.events = {event("a", 0, 10), event("b", 10, 20)};
  r.after = r.before;
  r.after.median_ms = 0.25, r.after.run_ms = {0.2, 0.25, 0.3};
  r.after.kernels = {stats("g1", {"a", "b"}, 15)};
  r.after.timeline.events = {event("g1", 0, 15)};
  r.speedup = 2;
  r.outputs.match = true, r.outputs.max_abs_error = 1e-6, r.outputs.max_rel_error = 1e-7;
  r.estimate_profile = "cpu-host";
  r.before_terms = {terms(600), terms(600)};
  r.after_terms = {std::nullopt};
  GroupMeasurement g;
  g.id = "g1", g.pattern = "chain", g.nodes = {"a", "b"}, g.status = "fused";
  g.backend = "generated-cpp", g.predicted_saved_us = 12, g.measured_saved_us = 15;
  g.bytes_saved = 400, g.launches_saved = 1, g.before_us = 30, g.after_us = 15;
  g.unfused_terms = {{"a", terms(600)}, {"b", terms(600)}};
  g.fused_terms = terms(800, true);
  r.groups = {g};
  return r;
}

BeforeAfterMeta meta() {
  BeforeAfterMeta m;
  m.model = "m.onnx", m.opt_level = 2, m.seed = 7;
  return m;
}

TEST(BeforeAfterDocument, ReadsBackWhatTheWriterWrote) {
  const BeforeAfterDocument d =
      read_before_after_document(before_after_json(result(), meta()), "r");
  EXPECT_TRUE(d.warnings.empty()) << d.warnings.front();
  EXPECT_TRUE(d.before_after);
  EXPECT_EQ(d.model, "m.onnx");
  EXPECT_EQ(d.plan, "");
  EXPECT_EQ(d.opt_level, 2);
  EXPECT_EQ(d.seed, 7);
  EXPECT_EQ(d.device, "cpu: test");
  EXPECT_EQ(d.runs, 3);
  EXPECT_DOUBLE_EQ(d.before.median_ms, 0.5);
  EXPECT_DOUBLE_EQ(d.after.min_ms, 0.2);
  EXPECT_DOUBLE_EQ(d.speedup, 2);
  EXPECT_EQ(d.outputs_match, true);
  EXPECT_EQ(d.tolerance_mode, "scaled");
  ASSERT_EQ(d.before.kernels.size(), 2u);
  const KernelRow& b = d.before.kernels[1];
  EXPECT_EQ(b.name, "b");
  EXPECT_DOUBLE_EQ(b.median_us, 20);
  EXPECT_DOUBLE_EQ(b.q3_us, 20.5);
  EXPECT_TRUE(b.has_quartiles());
  EXPECT_EQ(b.bytes_read, 400);
  ASSERT_TRUE(b.cost);
  EXPECT_DOUBLE_EQ(b.cost->bytes, 600);
  EXPECT_DOUBLE_EQ(b.cost->planes, 2);
  EXPECT_FALSE(d.after.kernels[0].cost) << "a kernel without terms is written as null";
  ASSERT_TRUE(d.before.trace);
  EXPECT_EQ(d.before.trace->events.size(), 2u);
  ASSERT_EQ(d.groups.size(), 1u);
  const BeforeAfterGroup& g = d.groups[0];
  EXPECT_EQ(g.id, "g1");
  EXPECT_EQ(g.nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(g.measured_saved_us, 15);
  EXPECT_DOUBLE_EQ(g.launches_saved, 1);
  EXPECT_TRUE(std::isnan(g.max_abs_error)) << "unknown numbers are written as null";
  ASSERT_TRUE(g.cost_terms);
  EXPECT_TRUE(g.cost_terms->complete());
  ASSERT_EQ(g.cost_terms->unfused.size(), 2u);
  EXPECT_EQ(g.cost_terms->unfused[1].first, "b");
  EXPECT_TRUE(g.cost_terms->fused.fused);
  EXPECT_DOUBLE_EQ(g.cost_terms->fused.bytes, 800);
  EXPECT_EQ(d.run("after"), &d.after);
  EXPECT_EQ(d.run("during"), nullptr);
}

TEST(BeforeAfterDocument, WithoutATraceTheKernelsAreLaidEndToEnd) {
  nlohmann::json j = before_after_json(result(), meta());
  j["after"].erase("trace");
  const BeforeAfterDocument d = read_before_after_document(j, "r");
  EXPECT_FALSE(d.after.trace);
  EXPECT_TRUE(d.warnings.empty());
  const Timeline t = d.before.laid_end_to_end();
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_DOUBLE_EQ(t.events[1].start_us, 10);
  EXPECT_DOUBLE_EQ(t.events[1].duration_us, 20);
  EXPECT_EQ(t.events[1].bytes_written, 200);
  EXPECT_DOUBLE_EQ(d.before.kernel_sum_us(), 30);
}

TEST(BeforeAfterDocument, AMissingFieldIsAWarningNotAnError) {
  nlohmann::json j = before_after_json(result(), meta());
  j["before"].erase("median_ms");
  j.erase("groups");
  j["groups_was_here"] = true;
  const BeforeAfterDocument d = read_before_after_document(j, "r");
  EXPECT_TRUE(std::isnan(d.before.median_ms));
  EXPECT_FALSE(d.has_groups);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_EQ(d.warnings[0], "before.median_ms missing");
  EXPECT_NE(d.warnings[1].find("\"groups\" missing"), std::string::npos);
}

TEST(BeforeAfterDocument, OlderResultsGetTheDefaultsTheirWriterImplied) {
  nlohmann::json j = before_after_json(result(), meta());
  for (auto& k : j["after"]["kernels"]) {
    k.erase("q1_us"), k.erase("q3_us");
    k["cost"] = {{"class", "elementwise"}, {"bytes", 100}, {"flops", 0}};
  }
  j["groups"][0]["cost_terms"]["fused"].erase("fused");
  const BeforeAfterDocument d = read_before_after_document(j, "r");
  const KernelRow& k = d.after.kernels[0];
  EXPECT_FALSE(k.has_quartiles());
  ASSERT_TRUE(k.cost);
  EXPECT_TRUE(k.cost->fused) << "a row of several nodes is a fused kernel";
  EXPECT_DOUBLE_EQ(k.cost->relayout_bytes, 0);
  EXPECT_FALSE(k.cost->winograd);
  EXPECT_TRUE(d.groups[0].cost_terms->fused.fused) << "a group of several members";
}

// Results written before the pooling class filed pooling under depthwise; the weights
// tell the two apart (terms without constant_bytes predate it too and stay as written).
TEST(BeforeAfterDocument, AnOlderDepthwiseKernelWithoutWeightsIsPooling) {
  auto terms = [](double constant_bytes) {
    return nlohmann::json{
        {"class", "depthwise"}, {"bytes", 100}, {"flops", 10}, {"constant_bytes", constant_bytes}};
  };
  EXPECT_EQ(kernel_terms_from_json(terms(0))->kernel_class, KernelClass::Pooling);
  EXPECT_EQ(kernel_terms_from_json(terms(36))->kernel_class, KernelClass::Depthwise);
  nlohmann::json bare = terms(0);
  bare.erase("constant_bytes");
  EXPECT_EQ(kernel_terms_from_json(bare)->kernel_class, KernelClass::Depthwise);
  nlohmann::json now = terms(0);
  now["class"] = "pooling";
  EXPECT_EQ(kernel_terms_from_json(now)->kernel_class, KernelClass::Pooling);
}

TEST(BeforeAfterDocument, ASingleRunProfileIsTheBeforeRunAlone) {
  nlohmann::json j = before_after_json(result(), meta())["before"];
  const BeforeAfterDocument d = read_before_after_document(j, "p");
  EXPECT_FALSE(d.before_after);
  EXPECT_EQ(d.before.kernels.size(), 2u);
  EXPECT_FALSE(d.after.present);
}

TEST(BeforeAfterDocument, NotAProfileIsAnErrorNamingTheOrigin) {
  try {
    read_before_after_document(nlohmann::json{{"foo", 1}}, "x.json");
    FAIL() << "no error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.path(), "x.json");
    EXPECT_NE(e.cause().find("neither a before/after result"), std::string::npos);
  }
  EXPECT_THROW(read_before_after_document(nlohmann::json::array(), "x.json"), FileError);
}

TEST(BeforeAfterDocument, ATruncatedFileIsAnErrorNamingTheFileAndTheCause) {
  const std::string text = before_after_json(result(), meta()).dump();
  const auto path =
      (std::filesystem::temp_directory_path() / "fx_before_after_truncated.json").string();
  {
    std::ofstream f(path);
    f << text.substr(0, text.size() / 2);
  }
  try {
    load_before_after_document(path);
    FAIL() << "no error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(e.cause().rfind("not valid JSON: ", 0), 0u) << e.cause();
  }
  std::filesystem::remove(path);
  try {
    load_before_after_document(path);
    FAIL() << "no error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.cause().rfind("cannot open", 0), 0u) << e.cause();
  }
  EXPECT_EQ(parse_before_after_document(text, "stdout").groups.size(), 1u);
}

}  // namespace
}  // namespace fx
