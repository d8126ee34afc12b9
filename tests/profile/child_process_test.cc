// SPDX-License-Identifier: Apache-2.0
#include "profile/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace fx {
namespace {

using Status = ChildResult::Status;

ChildOptions with_timeout(double seconds) {
  ChildOptions o;
  o.timeout_s = seconds;
  return o;
}

TEST(ChildProcess, CapturesOutputAndExitCode) {
  auto r = run_child({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, Status::Exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.last_error_line(), "err");
  EXPECT_EQ(r.describe(), "exited with code 3");

  auto ok = run_child({"true"});
  EXPECT_TRUE(ok.ok());
}

TEST(ChildProcess, CapturesLargeOutputOnBothStreams) {
  // More than a pipe's buffer on both streams at once: needs concurrent draining.
  auto r = run_child({"sh", "-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2"},
                     with_timeout(20));
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out.size(), 300000u);
  EXPECT_EQ(r.err.size(), 200000u);
}

TEST(ChildProcess, ReportsASegfaultAsACrash) {
  auto r = run_child({"sh", "-c", "echo about to crash >&2; kill -SEGV $$"});
  EXPECT_EQ(r.status, Status::Signaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.describe(), "crashed with SIGSEGV (segmentation fault)");
  EXPECT_EQ(r.last_error_line(), "about to crash");
}

TEST(ChildProcess, TimeoutKillsTheWholeProcessGroup) {
  // The shell starts a grandchild that would hold the pipes open for 30 s.
  auto r = run_child({"sh", "-c", "sleep 30 & sleep 30"}, with_timeout(0.3));
  EXPECT_EQ(r.status, Status::TimedOut);
  EXPECT_LT(r.wall_ms, 5000);
  EXPECT_GE(r.wall_ms, 300);
  EXPECT_NE(r.describe().find("timed out after"), std::string::npos);
}

TEST(ChildProcess, DoesNotWaitForGrandchildrenHoldingThePipes) {
  auto r = run_child({"sh", "-c", "sleep 30 & echo done"}, with_timeout(20));
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "done\n");
  EXPECT_LT(r.wall_ms, 5000);
}

TEST(ChildProcess, MissingProgramFailsToStart) {
  auto r = run_child({"/nonexistent/fx-no-such-program"});
  EXPECT_EQ(r.status, Status::FailedToStart);
  EXPECT_NE(r.describe().find("could not start"), std::string::npos);
  EXPECT_NE(r.describe().find("No such file"), std::string::npos);
}

TEST(ChildProcess, LimitsCapturedOutput) {
  ChildOptions o;
  o.max_output_bytes = 1000;
  auto r = run_child({"sh", "-c", "head -c 100000 /dev/zero"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_truncated);
}

}  // namespace
}  // namespace fx
