// SPDX-License-Identifier: Apache-2.0
#include "codegen/kernel_compiler.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "util/error.h"

namespace fx {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_compilations{0};

std::optional<std::string> on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

// FNV-1a, 64 bits: stable across runs and builds (std::hash is not).
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// Runs a shell command, returns (exit status, stdout+stderr).
std::pair<int, std::string> run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = ::pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace

CompiledLibrary::CompiledLibrary(void* handle, std::string so_path, std::string source_path,
                                 bool cache_hit)
    : handle_(handle),
      so_path_(std::move(so_path)),
      source_path_(std::move(source_path)),
      cache_hit_(cache_hit) {}

CompiledLibrary::~CompiledLibrary() {
  if (handle_) ::dlclose(handle_);
}

void* CompiledLibrary::raw_symbol(const std::string& name) const {
  void* f = ::dlsym(handle_, name.c_str());
  if (!f) throw Error("generated library " + so_path_ + " has no symbol " + name);
  return f;
}

std::string default_kernel_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/fusion-explorer/kernels";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/fusion-explorer/kernels";
}

std::string first_compiler_error(const std::string& output) {
  static const std::regex re(R"(^([^:\n]+):(\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(.*)$)");
  std::istringstream ss(output);
  std::string line;
  std::smatch m;
  while (std::getline(ss, line)) {
    if (std::regex_match(line, m, re)) return m[1].str() + ":" + m[2].str() + ": " + m[3].str();
  }
  return {};
}

KernelCompiler::KernelCompiler(CompilerOptions options) : opt_(std::move(options)) {
  if (opt_.cache_dir.empty()) opt_.cache_dir = default_kernel_cache_dir();
  // $FX_MARCH targets a lower ISA than the host's (the corpus benchmark's FX_ISA=avx2
  // run, beside ONEDNN_MAX_CPU_ISA): the generated code then uses what oneDNN may use.
  if (const char* march = std::getenv("FX_MARCH"); march && *march)
    for (auto& f : opt_.flags)
      if (f == "-march=native") f = std::string("-march=") + march;
  std::vector<std::string> tried;
  if (!opt_.compiler.empty()) {
    tried.push_back(opt_.compiler);
  } else {
    for (const char* env : {"FX_CXX", "CXX"})
      if (const char* v = std::getenv(env); v && *v) tried.push_back(v);
    tried.insert(tried.end(), {"c++", "g++", "clang++"});
  }
  for (const auto& t : tried) {
    if ((compiler_ = on_path(t))) return;
  }
  why_ = "no C++ compiler found (tried";
  for (const auto& t : tried) why_ += " " + t;
  why_ += "); fused groups run through the runtime's kernels";
}

std::string KernelCompiler::flags_string() const {
  std::string s;
  for (const auto& f : opt_.flags) s += (s.empty() ? "" : " ") + f;
  return s;
}

std::string KernelCompiler::cache_key(const std::string& source) const {
  uint64_t h = fnv1a(source);
  h = fnv1a("\n--compiler " + compiler_.value_or("") + "\n--flags " + flags_string(), h);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

int KernelCompiler::compilations() {
  return g_compilations.load();
}

std::shared_ptr<CompiledLibrary> KernelCompiler::build(const std::string& source,
                                                       const std::string& stem) {
  if (!compiler_) throw Error(why_);
  std::error_code ec;
  fs::create_directories(opt_.cache_dir, ec);
  if (ec) throw FileError(opt_.cache_dir, "cannot create the kernel cache folder: " + ec.message());
  std::string base = opt_.cache_dir + "/" + stem + "-" + cache_key(source);
  std::string src = base + ".cc", so = base + ".so";
  bool hit = fs::exists(so, ec);
  if (!hit) {
    {
      std::ofstream f(src, std::ios::binary);
      f << source;
      if (!f) throw FileError(src, "cannot write the generated source");
    }
    // Compile to a private name, then rename: processes sharing the cache never see
    // a half-written library.
    std::string tmp = so + ".tmp" + std::to_string(::getpid());
    std::string cmd = shell_quote(*compiler_);
    for (const auto& f : opt_.flags) cmd += " " + shell_quote(f);
    cmd += " -o " + shell_quote(tmp) + " " + shell_quote(src);
    spdlog::info("codegen: compiling {}", src);
    ++g_compilations;
    auto [rc, out] = run_capture(cmd);
    if (rc != 0) {
      fs::remove(tmp, ec);
      std::string first = first_compiler_error(out);
      throw Error("compiling generated kernels failed: " +
                  (first.empty() ? src + ": " + out.substr(0, 2000) : first));
    }
    fs::rename(tmp, so, ec);
    if (ec) throw FileError(so, "cannot move the compiled library into place: " + ec.message());
  } else {
    spdlog::debug("codegen: cache hit {}", so);
  }
  void* h = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw Error(std::string("cannot load generated library: ") + ::dlerror());
  return std::make_shared<CompiledLibrary>(h, so, src, hit);
}

}  // namespace fx
