// SPDX-License-Identifier: Apache-2.0
// The report gathered from a small graph whose node names need escaping, with a
// before/after fixture, a single-run profile and no profile, in all three formats.

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "analysis/fusion_finder.h"
#include "analysis/plan_totals.h"
#include "analysis/test_graphs.h"
#include "report/before_after_fixture.h"
#include "report/report_charts.h"
#include "report/report_writer.h"
#include "util/error.h"

namespace fx {
namespace {

using nlohmann::json;

struct Fixture {
  Graph graph;
  FusionPlan plan;
  AnalysisResult analysis;
  DeviceProfile device = testing::test_profile();
  std::vector<std::string> node_names;
};

// conv<1>&"a" -> bn'1 -> relu|1 -> pool -> conv2 -> bn2 -> relu2: two Conv+BN+ReLU groups.
Fixture make_fixture() {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto c1 = testing::conv(b, x, 3, 4, 8, "conv<1>&\"a\"");
  auto r1 = b.op("Relu", {testing::batch_norm(b, c1, 4, "bn'1")}, {}, "relu|1");
  auto p =
      b.op("MaxPool", {r1},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
           "pool", Shape::of({1, 4, 4, 4}));
  // 8 channels: with 16, both groups write 1 KiB and their predicted savings tie.
  auto c2 = testing::conv(b, p, 4, 8, 4, "conv2");
  b.output(b.op("Relu", {testing::batch_norm(b, c2, 8, "bn2")}, {}, "relu2"));
  Fixture f;
  f.graph = b.build();
  FusionOptions fo;
  fo.opt_level = 1;
  f.analysis = analyze_fusion(f.graph, f.device, fo);
  f.plan = FusionPlan(f.analysis, "model.onnx");
  f.plan.accept_all_above(0.0);
  for (const auto& n : f.graph.nodes()) f.node_names.push_back(n.name);
  return f;
}

ReportOptions options() {
  ReportOptions o;
  o.model_path = "models/my model.onnx";
  o.plan_path = "plan.json";
  o.profile_path = "before_after.json";
  o.device_arg = "test-device";
  o.generated_at = "2026-11-23T10:00:00Z";
  o.out_path = "report.html";
  return o;
}

ReportData gather(const Fixture& f, const json* doc) {
  ReportOptions o = options();
  if (!doc) o.profile_path.clear();
  return gather_report(f.graph, ModelInfo{}, f.plan, f.device, f.analysis, doc, o);
}

std::vector<FusionGroup> accepted(const FusionPlan& p) {
  std::vector<FusionGroup> out;
  for (const auto* g : p.accepted()) out.push_back(*g);
  return out;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

TEST(ReportWriters, FixtureHasTwoAcceptedGroups) {
  Fixture f = make_fixture();
  ASSERT_EQ(f.plan.accepted().size(), 2u) << "the test graph should give two conv_bn_act groups";
}

TEST(ReportWriters, HtmlIsSelfContainedEscapedAndHasEveryChart) {
  Fixture f = make_fixture();
  json doc = testing::before_after_fixture(f.node_names, accepted(f.plan));
  std::string html = render_html_report(gather(f, &doc));
  // Nothing loaded from outside the file.
  EXPECT_FALSE(std::regex_search(
      html, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  for (const char* banned : {"<script", "<link", "@import", "url(", "<iframe", "<img"})
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  // Node names are escaped everywhere.
  EXPECT_EQ(html.find("conv<1>"), std::string::npos);
  EXPECT_NE(html.find("conv&lt;1&gt;&amp;&quot;a&quot;"), std::string::npos);
  EXPECT_NE(html.find("bn&#39;1"), std::string::npos);
  // Every chart, and the labels saying where the numbers come from.
  EXPECT_EQ(count(html, "class=\"chart bar-chart\""), 1);
  EXPECT_EQ(count(html, "class=\"chart scatter-chart\""), 1);
  EXPECT_EQ(count(html, "class=\"chart timeline-strip\""), 1);
  EXPECT_EQ(count(html, "<rect class=\"bar\""), 4);  // 2 groups x (estimated, measured)
  EXPECT_EQ(count(html, "<circle class=\"point\""), 2);
  EXPECT_EQ(count(html, "<rect class=\"kernel\""), 7 + 3);  // 7 nodes before; 2 groups + pool after
  EXPECT_NE(html.find("estimated on test-device"), std::string::npos);
  EXPECT_NE(html.find("measured, median of 20 runs on cpu: test, 2 threads"), std::string::npos);
  EXPECT_NE(html.find("Spearman rank correlation"), std::string::npos);
  EXPECT_NE(html.find("1.5e-07"), std::string::npos);  // max abs error
  EXPECT_NE(html.find("fxc profile"), std::string::npos);
  EXPECT_NE(html.find("&#39;models/my model.onnx&#39;"), std::string::npos);  // shell-quoted
}

TEST(ReportWriters, TimelineColoursFusedKernelsByTheirGroup) {
  Fixture f = make_fixture();
  json doc = testing::before_after_fixture(f.node_names, accepted(f.plan));
  ReportData d = gather(f, &doc);
  auto t = timeline_chart(d);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->lanes.size(), 2u);
  auto colors = group_colors(d);
  const FusionGroup* g = f.plan.accepted()[0];
  // The fused kernel (after) and its members (before) share the group's colour.
  int before_members = 0, after_fused = 0;
  for (const auto& b : t->lanes[0].boxes) before_members += b.color == colors.at(g->id);
  for (const auto& b : t->lanes[1].boxes) after_fused += b.color == colors.at(g->id);
  EXPECT_EQ(before_members, int(g->nodes.size()));
  EXPECT_EQ(after_fused, 1);
  EXPECT_TRUE(d.profile->before.timeline_from_trace);
  // Both lanes are drawn on one axis: "after" ends earlier than "before".
  EXPECT_LT(t->lanes[1].boxes.back().start, t->lanes[0].boxes.back().start);
}

TEST(ReportWriters, JsonFollowsTheDocumentedSchema) {
  Fixture f = make_fixture();
  json doc = testing::before_after_fixture(f.node_names, accepted(f.plan));
  json j = json::parse(render_json_report(gather(f, &doc)));
  EXPECT_EQ(j["schema"], "fusion-explorer/report");
  EXPECT_EQ(j["schema_version"], 1);
  for (const char* k : {"generator", "generated_at", "inputs", "model", "device", "estimates",
                        "analysis", "groups", "not_fused", "measurements", "commands", "warnings"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["model"]["nodes"], 7);
  EXPECT_EQ(j["model"]["op_histogram"][0]["op"], "BatchNormalization");  // ties sorted by name
  EXPECT_EQ(j["device"]["name"], "test-device");
  ASSERT_EQ(j["groups"].size(), f.plan.groups().size());
  const json& g0 = j["groups"][0];
  EXPECT_EQ(g0["status"], "accepted");
  EXPECT_TRUE(g0["estimate"]["time_saved_us"].is_number());
  ASSERT_TRUE(g0["measured"].is_object());
  EXPECT_NEAR(g0["measured"]["measured_saved_us"].get<double>(), 12.0, 1e-9);  // 30 us x 0.4
  const json& m = j["measurements"];
  EXPECT_EQ(m["kind"], "before_after");
  EXPECT_EQ(m["runs"], 20);
  EXPECT_EQ(m["equivalence"]["outputs_match"], true);
  EXPECT_NEAR(m["equivalence"]["max_rel_error"].get<double>(), 2.5e-6, 1e-12);
  EXPECT_NEAR(m["speedup"].get<double>(), 70.0 / 49.0, 1e-9);
  EXPECT_EQ(m["correlated_groups"], 2);
  EXPECT_EQ(j["inputs"]["profile"], "before_after.json");
  EXPECT_EQ(j["commands"].size(), 4u);
}

TEST(ReportWriters, MarkdownHasTablesAndEscapesCells) {
  Fixture f = make_fixture();
  json doc = testing::before_after_fixture(f.node_names, accepted(f.plan));
  std::string md = render_markdown_report(gather(f, &doc));
  EXPECT_NE(md.find("| group | pattern | ops | status | reason | traffic saved | launches saved | "
                    "est. time saved | measured saved | backend |\n| --- | --- |"),
            std::string::npos);
  EXPECT_NE(md.find("| op | count |"), std::string::npos);
  EXPECT_NE(md.find("| speedup | max abs error | max rel error | outputs match |"),
            std::string::npos);
  EXPECT_NE(md.find("| yes |"), std::string::npos);
  EXPECT_EQ(md.find("<1>"), std::string::npos);
  // Every table row has as many cells as its header.
  std::regex header(R"(\| group \|.*\n)");
  std::smatch mh;
  ASSERT_TRUE(std::regex_search(md, mh, header));
  EXPECT_NE(md.find("## Commands to reproduce\n\n```sh\nfxc analyze"), std::string::npos);
}

TEST(ReportWriters, EveryTimeSavedNamesTheModelThatPredictedIt) {
  Fixture f = make_fixture();
  // Without a saving model in the profile: the difference of kernel times, said so.
  std::string md = render_markdown_report(gather(f, nullptr));
  EXPECT_NE(md.find("time saved by the difference of kernel times for 2 groups"), std::string::npos)
      << md;
  // A calibrated profile whose conv class is fitted (coefficient 1 on the launches avoided).
  f.device.saving_model.groups = 12;
  f.device.saving_model.fitted_to = "test fit";
  auto& conv = f.device.saving_model.classes[static_cast<std::size_t>(KernelClass::Conv)];
  conv.groups = 12;
  conv.fitted = true;
  conv.coefficients = {0, 0, 1, 0, 0, 0};
  FusionOptions fo;
  fo.opt_level = 1;
  f.analysis = analyze_fusion(f.graph, f.device, fo);
  f.plan = FusionPlan(f.analysis, "model.onnx");
  const ReportData d = gather(f, nullptr);
  const std::string label = "saving model (class conv, fitted to 12 groups; test fit)";
  EXPECT_NE(render_markdown_report(d).find("time saved by the " + label + " for 2 groups"),
            std::string::npos);
  EXPECT_NE(render_html_report(d).find("time saved by the " + label), std::string::npos);
  const json j = json::parse(render_json_report(d));
  for (const auto& g : j["groups"]) {
    EXPECT_EQ(g["estimate"]["time_saved_by"], label);
    // launches saved x the test profile's 1 us launch overhead.
    EXPECT_NEAR(g["estimate"]["time_saved_us"].get<double>(),
                g["estimate"]["launches_saved"].get<double>(), 1e-9);
  }
}

// A plan records its profile's label ("... (calibrated)"): reported on that same
// profile, no warning; on the uncalibrated one, the warning names both.
TEST(ReportWriters, WarnsOnlyWhenThePlansProfileDiffers) {
  Fixture f = make_fixture();
  f.device.calibrated = true;
  FusionOptions fo;
  fo.opt_level = 1;
  f.analysis = analyze_fusion(f.graph, f.device, fo);
  f.plan = FusionPlan(f.analysis, "model.onnx");
  ASSERT_EQ(f.plan.device(), f.device.label());
  auto mentions_device = [](const ReportData& d) {
    return std::any_of(d.warnings.begin(), d.warnings.end(), [](const std::string& w) {
      return w.find("the plan's estimates were made on") != std::string::npos;
    });
  };
  EXPECT_FALSE(mentions_device(gather(f, nullptr)));
  f.device.calibrated = false;
  const ReportData d = gather(f, nullptr);
  ASSERT_TRUE(mentions_device(d));
  EXPECT_NE(d.warnings.front().find(f.device.name + " (calibrated), the analysis totals on " +
                                    f.device.name),
            std::string::npos)
      << d.warnings.front();
}

TEST(ReportWriters, SingleRunProfileSaysThereIsNoBeforeAfter) {
  Fixture f = make_fixture();
  json full = testing::before_after_fixture(f.node_names, accepted(f.plan));
  json single = full["before"];  // the shape of `fxc profile --json`
  single["device"] = "cpu: test, 2 threads";
  single["runs"] = 10;
  ReportData d = gather(f, &single);
  ASSERT_TRUE(d.profile);
  EXPECT_FALSE(d.profile->before_after);
  std::string html = render_html_report(d);
  EXPECT_NE(html.find("single-run profile, not a before/after result"), std::string::npos);
  EXPECT_EQ(html.find("scatter-chart"), std::string::npos);
  EXPECT_EQ(count(html, "<rect class=\"lane\""), 1);
  EXPECT_EQ(json::parse(render_json_report(d))["measurements"]["kind"], "single_run");
}

TEST(ReportWriters, WithoutProfileOnlyEstimates) {
  Fixture f = make_fixture();
  ReportData d = gather(f, nullptr);
  std::string html = render_html_report(d);
  EXPECT_NE(html.find("nothing measured"), std::string::npos);
  EXPECT_EQ(count(html, "<rect class=\"bar\""), 2);
  EXPECT_EQ(html.find("timeline-strip"), std::string::npos);
  json j = json::parse(render_json_report(d));
  EXPECT_TRUE(j["measurements"].is_null());
  EXPECT_TRUE(j["groups"][0]["measured"].is_null());
}

TEST(ReportWriters, TolerantOfMissingKeys) {
  Fixture f = make_fixture();
  json doc = testing::before_after_fixture(f.node_names, accepted(f.plan));
  doc.erase("groups");
  doc["before"].erase("trace");
  doc["after"].erase("trace");
  doc.erase("outputs_match");
  ReportData d = gather(f, &doc);
  EXPECT_FALSE(d.profile->before.timeline_from_trace);
  EXPECT_EQ(d.profile->before.timeline.size(), 7u);  // laid end to end from the kernel rows
  EXPECT_DOUBLE_EQ(d.profile->before.timeline[3].start_us, 30);
  EXPECT_FALSE(d.warnings.empty());
  std::string html = render_html_report(d);
  EXPECT_NE(html.find("laid end to end"), std::string::npos);
  EXPECT_NE(html.find("outputs match (rtol 1e-3, atol 1e-5)</th><td>unknown"), std::string::npos);
  EXPECT_THROW(read_profile_input(json::array(), "x.json"), Error);
  EXPECT_THROW(read_profile_input(json{{"foo", 1}}, "x.json"), Error);
}

TEST(ReportWriters, FormatFromPath) {
  EXPECT_EQ(report_format_from_path("a/report.html"), ReportFormat::Html);
  EXPECT_EQ(report_format_from_path("r.MD"), ReportFormat::Markdown);
  EXPECT_EQ(report_format_from_path("r.json"), ReportFormat::Json);
  EXPECT_THROW(report_format_from_path("r.pdf"), Error);
  EXPECT_THROW(report_format_from_path("dir.html/report"), Error);
}

TEST(ReportStats, SpearmanRankCorrelation) {
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ties take their average rank: ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4).
  EXPECT_NEAR(spearman_correlation({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9486832980505138, 1e-12);
  EXPECT_TRUE(std::isnan(spearman_correlation({1}, {2})));
  EXPECT_TRUE(std::isnan(spearman_correlation({1, 2, 3}, {5, 5, 5})));
}

// The headline counts the plan, not every candidate: how many of its groups are
// accepted, and kernels and time with those fused (plan_totals.h), the same numbers the
// GUI's status bar shows; and it names the plan.
TEST(ReportWriters, HeadlineCountsTheAcceptedGroupsAndNamesThePlan) {
  Fixture f = make_fixture();
  ASSERT_EQ(f.plan.groups().size(), 2u);
  ASSERT_TRUE(f.plan.reset(f.plan.groups()[1].id));  // one of two accepted
  const PlanTotals t = plan_totals(f.analysis, f.plan);
  ASSERT_EQ(t.accepted, 1);
  ASSERT_GT(t.kernels_after, f.analysis.kernels_after);  // not "every group fused"
  const std::string md = render_markdown_report(gather(f, nullptr));
  EXPECT_NE(md.find(fmt::format("With the 1 of 2 groups the plan accepts fused: kernels {} -> {}",
                                t.kernels_before, t.kernels_after)),
            std::string::npos)
      << md.substr(0, 2000);
  EXPECT_NE(md.find("Plan: plan.json"), std::string::npos);
  EXPECT_EQ(md.find("every group fused"), std::string::npos);
  const std::string html = render_html_report(gather(f, nullptr));
  EXPECT_NE(html.find("<b>1 of 2</b>groups accepted in the plan"), std::string::npos);
  EXPECT_NE(html.find(fmt::format("<b>{} &rarr; {}</b>kernels with the accepted groups fused",
                                  t.kernels_before, t.kernels_after)),
            std::string::npos);
  ReportData unnamed = gather(f, nullptr);
  unnamed.options.plan_path.clear();
  EXPECT_NE(render_markdown_report(unnamed).find("Plan: the analysis's plan (not saved to a file)"),
            std::string::npos);
}

}  // namespace
}  // namespace fx
