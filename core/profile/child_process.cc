// SPDX-License-Identifier: Apache-2.0
#include "profile/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "util/error.h"

extern char** environ;

namespace fx {
namespace {

using Clock = std::chrono::steady_clock;

struct Stream {
  int fd = -1;
  std::string* text = nullptr;
  bool* truncated = nullptr;
};

// Reads what is available; closes the fd at end of file. Returns false when closed.
bool pump(Stream& s, std::size_t cap) {
  char buf[65536];
  ssize_t n = ::read(s.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) {
    ::close(s.fd);
    s.fd = -1;
    return false;
  }
  std::size_t room = s.text->size() < cap ? cap - s.text->size() : 0;
  std::size_t take = std::min(room, static_cast<std::size_t>(n));
  s.text->append(buf, take);
  if (take < static_cast<std::size_t>(n)) *s.truncated = true;
  return true;
}

// True when the child has ended, without reaping it (so its pid, and with it the
// process group id, cannot be reused while we still signal the group).
bool has_ended(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

bool is_crash(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT ||
         sig == SIGTRAP || sig == SIGSYS;
}

}  // namespace

std::string signal_description(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  const char* descr = ::sigdescr_np(sig);
  std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (!descr) return name;
  std::string d = descr;
  if (!d.empty()) d[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(d[0])));
  return name + " (" + d + ")";
}

std::string ChildResult::describe() const {
  switch (status) {
    case Status::Exited: return "exited with code " + std::to_string(exit_code);
    case Status::Signaled:
      return (is_crash(signal) ? "crashed with " : "was killed by ") + signal_description(signal);
    case Status::TimedOut: {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.3g", wall_ms / 1000.0);
      return std::string("timed out after ") + secs + " s and was killed";
    }
    case Status::FailedToStart: return "could not start: " + error;
  }
  return "ended in an unknown way";
}

std::string ChildResult::last_error_line() const {
  std::size_t end = err.size();
  while (end > 0) {
    std::size_t begin = err.rfind('\n', end - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    std::string line = err.substr(begin, end - begin);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    if (begin == 0) break;
    end = begin - 1;
  }
  return {};
}

ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options) {
  ChildResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    ::close(out_pipe[0]), ::close(out_pipe[1]);
    return r;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // dup2 clears close-on-exec on the copy; the pipe ends themselves close at exec.
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  if (options.working_dir)
    posix_spawn_file_actions_addchdir_np(&actions, options.working_dir->c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group, so a timeout kills all of it
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const auto start = Clock::now();
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    r.error = argv[0] + ": " + std::strerror(rc);
    return r;
  }

  const auto deadline = options.timeout_s
                            ? start + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(*options.timeout_s))
                            : Clock::time_point::max();
  Stream streams[2] = {{out_pipe[0], &r.out, &r.out_truncated},
                       {err_pipe[0], &r.err, &r.err_truncated}};
  bool timed_out = false;
  auto kill_group = [pid] { ::kill(-pid, SIGKILL); };

  for (;;) {
    pollfd fds[2];
    nfds_t n = 0;
    for (auto& s : streams)
      if (s.fd >= 0) fds[n++] = {s.fd, POLLIN, 0};
    const auto now = Clock::now();
    if (now >= deadline) {
      timed_out = true;
      kill_group();
      break;
    }
    if (n == 0) {
      // Both streams closed: wait for the exit itself, still under the deadline.
      if (has_ended(pid)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    // Wake up now and then: a grandchild may hold the pipes open after the child ended.
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    int ms = static_cast<int>(std::min<int64_t>(wait.count(), 200));
    int ready = ::poll(fds, n, ms);
    if (ready < 0 && errno != EINTR) break;
    for (auto& s : streams)
      if (s.fd >= 0) {
        for (nfds_t i = 0; i < n; ++i)
          if (fds[i].fd == s.fd && fds[i].revents) pump(s, options.max_output_bytes);
      }
    if (has_ended(pid)) break;
  }
  // Leave nothing of the child's group running, then collect what is left to read.
  kill_group();
  for (auto& s : streams) {
    if (s.fd < 0) continue;
    ::fcntl(s.fd, F_SETFL, O_NONBLOCK);
    while (pump(s, options.max_output_bytes) && s.fd >= 0) {
      pollfd p{s.fd, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) break;
    }
    if (s.fd >= 0) ::close(s.fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (timed_out) {
    r.status = ChildResult::Status::TimedOut;
  } else if (WIFSIGNALED(status)) {
    r.status = ChildResult::Status::Signaled;
    r.signal = WTERMSIG(status);
  } else {
    r.status = ChildResult::Status::Exited;
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

void die_with_parent(int parent_pid) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl: then we were re-parented already.
  if (::getppid() != parent_pid) ::_exit(1);
#else
  (void)parent_pid;
#endif
}

std::string self_executable_path() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error(std::string("cannot find the running program: ") + std::strerror(errno));
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace fx
