// SPDX-License-Identifier: Apache-2.0
#include "report/report_text.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

TEST(ReportText, EscapeXml) {
  EXPECT_EQ(escape_xml("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(escape_xml("plain/name:0"), "plain/name:0");
}

TEST(ReportText, EscapeMarkdownCell) {
  EXPECT_EQ(escape_markdown_cell("a|b"), "a\\|b");
  EXPECT_EQ(escape_markdown_cell("<x>&\n_y_"), "&lt;x&gt;&amp; \\_y\\_");
}

TEST(ReportText, ShellQuote) {
  EXPECT_EQ(shell_quote("model.onnx"), "model.onnx");
  EXPECT_EQ(shell_quote("my model.onnx"), "'my model.onnx'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_join({"fxc", "report", "a b", "--out", "r.html"}),
            "fxc report 'a b' --out r.html");
}

TEST(ReportText, Numbers) {
  EXPECT_EQ(format_number(1.5000, 3), "1.5");
  EXPECT_EQ(format_number(20.0, 3), "20");
  EXPECT_EQ(format_number(-0.0001, 2), "0");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_us(12.34), "12.3 us");
  EXPECT_EQ(human_us(4560), "4.56 ms");
}

}  // namespace
}  // namespace fx
