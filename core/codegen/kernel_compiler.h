// SPDX-License-Identifier: Apache-2.0
#pragma once
// Compiles generated C++ into a shared library and loads it, with a cache.
//
//   KernelCompiler cc;                       // finds the system C++ compiler
//   auto lib = cc.build(source, "tiny_cnn"); // throws fx::Error on a compile error
//   auto fn = lib->symbol<void (*)(...)>("fx_fg_1a2b3c4d");
//
// The cache folder ($XDG_CACHE_HOME/fusion-explorer/kernels, ~/.cache/... otherwise,
// or CompilerOptions::cache_dir) holds <stem>-<hash>.cc and .so, the hash covering the
// source, the compiler and the flags: a second build of the same source loads the .so
// without compiling. A compile error is reported as "<file>:<line>: <message>" of the
// generated source (the compiler's first error line).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fx {

struct CompilerOptions {
  std::string compiler;  // empty: $FX_CXX, $CXX, then c++ / g++ / clang++ on PATH
  // -march=native is replaced by -march=$FX_MARCH when that is set (e.g. x86-64-v3).
  // No FP traps or errno are relied on: dropping them lets selects, sqrt and rounding
  // vectorize. No -ffast-math: NaN/Inf and reassociation stay as written. On x86-64,
  // full-width AVX-512 where the CPU has it (GCC otherwise keeps 256-bit vectors): the
  // exp/erf polynomials of the memory-bound kernels need the throughput.
  std::vector<std::string> flags {
    "-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fno-trapping-math",
#if defined(__x86_64__)
        "-mprefer-vector-width=512",
#endif
        "-shared", "-fPIC"
  };
  std::string cache_dir;  // empty: default_kernel_cache_dir()
};

// A loaded shared library; dlclose'd when the last reference goes.
class CompiledLibrary {
 public:
  CompiledLibrary(void* handle, std::string so_path, std::string source_path, bool cache_hit);
  ~CompiledLibrary();
  CompiledLibrary(const CompiledLibrary&) = delete;
  CompiledLibrary& operator=(const CompiledLibrary&) = delete;

  void* raw_symbol(const std::string& name) const;  // throws fx::Error when absent
  template <class Fn>
  Fn symbol(const std::string& name) const {
    return reinterpret_cast<Fn>(raw_symbol(name));
  }
  const std::string& so_path() const { return so_path_; }
  const std::string& source_path() const { return source_path_; }
  bool cache_hit() const { return cache_hit_; }

 private:
  void* handle_;
  std::string so_path_, source_path_;
  bool cache_hit_;
};

class KernelCompiler {
 public:
  explicit KernelCompiler(CompilerOptions options = {});
  // The compiler found, or nullopt; why_unavailable() then says what was tried.
  const std::optional<std::string>& compiler() const { return compiler_; }
  const std::string& why_unavailable() const { return why_; }
  const CompilerOptions& options() const { return opt_; }
  std::string flags_string() const;

  // Writes, compiles (unless cached) and loads. Throws fx::Error: no compiler, a
  // compile error (file:line), or dlopen failing.
  std::shared_ptr<CompiledLibrary> build(const std::string& source, const std::string& stem);

  // The cache key of a source with this compiler and flags (16 hex digits).
  std::string cache_key(const std::string& source) const;
  // How many times this process ran the compiler (all KernelCompiler objects).
  static int compilations();

 private:
  CompilerOptions opt_;
  std::optional<std::string> compiler_;
  std::string why_;
};

std::string default_kernel_cache_dir();

// The first "file:line[:col]: error: message" in compiler output, as
// "file:line: message"; empty when there is none.
std::string first_compiler_error(const std::string& output);

}  // namespace fx
