// SPDX-License-Identifier: Apache-2.0
// fx_conformance: runs ONNX backend tests (the node, pytorch-converted and
// pytorch-operator suites share one layout) through the runtime.
//
//   fx_conformance [--filter SUBSTR] [--threads N] [--verbose] [--min-pass-percent P] DIR
//
// For each test directory: load model.onnx, run each test_data_set_* with its
// input_*.pb, compare with output_*.pb (same dtype and shape; floats within
// |a - b| <= atol + rtol * |b|, NaN equal to NaN; other types, strings too, exact). A test is
// skipped only when conformance_skips.cc lists it by name with the reason (it is
// still run, and the skip is marked stale when it passes), or when
// one of its ops has no kernel at all ("unsupported op X": ops are being added, and
// such a test cannot regress); every other test must pass. Prints the failures,
// the skips, "N passed, M failed, K skipped", then the pass percentage over the
// tests that are not training-only; exits 1 when M > 0 or the percentage is below
// --min-pass-percent.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "conformance_skips.h"
#include "ir/graph.h"
#include "ir/subgraph.h"
#include "onnx/model_loader.h"
#include "onnx/tensor_file.h"
#include "onnx/value_file.h"
#include "runtime/executor.h"
#include "runtime/kernel_registry.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

constexpr double kRtol = 1e-3, kAtol = 1e-5;

// Half types are computed in float32 and rounded once at each step's end, while the
// reference rounds at other points: allow a few units of their last place.
struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance(fx::DType t) {
  if (t == fx::DType::Float16) return {4e-3, 1e-3};
  if (t == fx::DType::BFloat16) return {2e-2, 1e-2};
  return {kRtol, kAtol};
}

// ONNX 1.12 wrote bfloat16 test tensors as uint16 (the same bits): read them as
// the bfloat16 the model declares.
fx::Tensor as_declared(fx::Tensor t, fx::DType declared) {
  if (t.dtype() != fx::DType::UInt16 || declared != fx::DType::BFloat16) return t;
  fx::Tensor b(fx::DType::BFloat16, t.dims());
  if (t.byte_size()) std::memcpy(b.raw(), t.raw(), t.byte_size());
  return b;
}

// Empty when equal, else the first difference.
std::string compare(const fx::Tensor& got, const fx::Tensor& want) {
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    return "got " + got.str() + ", expected " + want.str();
  }
  const fx::DType wt = want.dtype();
  if (want.is_string()) {
    for (int64_t i = 0; i < want.numel(); ++i)
      if (got.data<std::string>()[i] != want.data<std::string>()[i])
        return "element " + std::to_string(i) + ": '" + got.data<std::string>()[i] + "' vs '" +
               want.data<std::string>()[i] + "'";
    return {};
  }
  bool is_float = wt == fx::DType::Float32 || wt == fx::DType::Float64 ||
                  wt == fx::DType::Float16 || wt == fx::DType::BFloat16;
  const Tolerance tol = tolerance(wt);
  if (is_float) {
    auto g = got.to_floats(), w = want.to_floats();
    if (want.dtype() == fx::DType::Float64) {  // keep double precision for the check
      const double* gd = got.data<double>();
      const double* wd = want.data<double>();
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (std::isnan(gd[i]) && std::isnan(wd[i])) continue;
        if (!(std::abs(gd[i] - wd[i]) <= kAtol + kRtol * std::abs(wd[i])) && gd[i] != wd[i]) {
          return "element " + std::to_string(i) + ": " + std::to_string(gd[i]) + " vs " +
                 std::to_string(wd[i]);
        }
      }
      return {};
    }
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (std::isnan(g[i]) && std::isnan(w[i])) continue;
      if (g[i] == w[i]) continue;  // also equal infinities
      if (!(std::abs(g[i] - w[i]) <= tol.atol + tol.rtol * std::abs(w[i]))) {
        return "element " + std::to_string(i) + ": " + std::to_string(g[i]) + " vs " +
               std::to_string(w[i]);
      }
    }
    return {};
  }
  // Empty tensors may hold no buffer (null): memcmp must not see them.
  if (want.byte_size() && std::memcmp(got.raw(), want.raw(), want.byte_size()) != 0)
    return "values differ";
  return {};
}

// A sequence/optional test file as the runtime holds it.
fx::RunValue to_run_value(const fx::ValueFile& f) {
  if (f.kind == fx::ValueKind::Tensor) return {fx::Tensor::from_data(f.tensors.front()), nullptr};
  auto seq = std::make_shared<fx::BoxedValue>();
  seq->kind = fx::ValueKind::Sequence;
  for (const auto& t : f.tensors) seq->items.push_back(fx::Tensor::from_data(t).clone());
  if (!seq->items.empty()) seq->elem_dtype = seq->items.front().dtype();
  if (f.kind == fx::ValueKind::Sequence) return {fx::Tensor(), seq};
  auto opt = std::make_shared<fx::BoxedValue>();
  opt->kind = fx::ValueKind::Optional;
  opt->elem_dtype = seq->elem_dtype;
  if (f.has_element) {
    if (f.optional_of_sequence)
      opt->inner = seq;
    else
      opt->items = seq->items;
  }
  return {fx::Tensor(), opt};
}

// Empty when equal, else the first difference; sequences and optionals element-wise.
std::string compare_value(const fx::RunValue& got, const fx::ValueFile& want, fx::DType declared) {
  if (want.kind == fx::ValueKind::Tensor) {
    if (got.is_boxed()) return "got a sequence/optional, expected a tensor";
    return compare(got.tensor, as_declared(fx::Tensor::from_data(want.tensors.front()), declared));
  }
  if (!got.is_boxed()) return "got a tensor, expected a sequence/optional";
  const fx::BoxedValue* box = got.boxed.get();
  if (want.kind == fx::ValueKind::Optional) {
    if (box->kind != fx::ValueKind::Optional) return "got a sequence, expected an optional";
    if (box->optional_has_element() != want.has_element) return "optional presence differs";
    if (!want.has_element) return {};
    if (want.optional_of_sequence) {
      if (!box->inner) return "got an optional tensor, expected an optional sequence";
      box = box->inner.get();
    }
  } else if (box->kind != fx::ValueKind::Sequence) {
    return "got an optional, expected a sequence";
  }
  if (box->items.size() != want.tensors.size())
    return std::to_string(box->items.size()) + " elements, expected " +
           std::to_string(want.tensors.size());
  for (std::size_t i = 0; i < want.tensors.size(); ++i) {
    auto diff = compare(box->items[i], fx::Tensor::from_data(want.tensors[i]));
    if (!diff.empty()) return "element " + std::to_string(i) + ": " + diff;
  }
  return {};
}

struct Outcome {
  enum Kind { Pass, Fail, Skip } kind;
  std::string reason;
};

std::vector<fs::path> sorted_entries(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  }
  // input_10 after input_9
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    auto sa = a.filename().string(), sb = b.filename().string();
    return sa.size() != sb.size() ? sa.size() < sb.size() : sa < sb;
  });
  return out;
}

Outcome run_files(const fs::path& dir, int threads) {
  fx::LoadedModel m;
  try {
    m = fx::load_onnx((dir / "model.onnx").string());
  } catch (const fx::Error& e) {
    return {Outcome::Fail, std::string("model does not load: ") + e.what()};
  }
  const fx::Graph& g = m.graph;
  // Ops of subgraphs (If/Loop/Scan bodies) count too.
  std::string unsupported;
  auto check_ops = [&](const fx::Graph& graph, auto&& self) -> void {
    for (const auto& n : graph.nodes()) {
      if (unsupported.empty() && !fx::is_supported_op(n.domain, n.op_type))
        unsupported = n.qualified_op();
      for (const auto& [attr, sub] : fx::subgraphs_of(n)) self(*sub, self);
    }
  };
  check_ops(g, check_ops);
  if (!unsupported.empty()) return {Outcome::Skip, "unsupported op " + unsupported};
  int64_t opset = 0;
  for (const auto& [domain, version] : m.info.opsets) {
    if (domain == "ai.onnx") opset = version;
  }
  try {
    fx::Executor ex(g, fx::ExecutorOptions{threads, opset});
    auto sets = sorted_entries(dir, "test_data_set_");
    if (sets.empty()) return {Outcome::Skip, "no test data"};
    for (const auto& set : sets) {
      std::map<std::string, fx::RunValue> inputs;
      auto in_files = sorted_entries(set, "input_");
      auto rt_inputs = g.runtime_inputs();
      // Inputs are positional over the graph's inputs (initializers excluded).
      for (std::size_t i = 0; i < in_files.size() && i < rt_inputs.size(); ++i) {
        const fx::Value& v = g.value(rt_inputs[i]);
        fx::RunValue in = to_run_value(fx::read_value_file(in_files[i].string(), v.kind));
        if (!in.is_boxed()) in.tensor = as_declared(std::move(in.tensor), v.dtype);
        inputs[v.name] = std::move(in);
      }
      auto outs = ex.run_values(inputs);
      auto out_files = sorted_entries(set, "output_");
      if (out_files.size() != outs.size()) {
        return {Outcome::Fail, std::to_string(outs.size()) + " outputs, expected " +
                                   std::to_string(out_files.size())};
      }
      for (std::size_t i = 0; i < outs.size(); ++i) {
        const fx::Value& out = g.value(g.outputs()[i]);
        auto want = fx::read_value_file(out_files[i].string(), out.kind);
        auto diff = compare_value(outs[i], want, out.dtype);
        if (!diff.empty()) {
          return {Outcome::Fail,
                  set.filename().string() + " output " + std::to_string(i) + ": " + diff};
        }
      }
    }
  } catch (const std::exception& e) {
    return {Outcome::Fail, e.what()};
  }
  return {Outcome::Pass, {}};
}

// A listed test is still run, so that the list's stale entries show.
Outcome run_test(const fs::path& dir, int threads) {
  Outcome o = run_files(dir, threads);
  auto skip = fxconf::known_skips().find(dir.filename().string());
  if (skip == fxconf::known_skips().end()) return o;
  if (o.kind == Outcome::Pass)
    return {Outcome::Skip, skip->second + " (passes now: remove it from conformance_skips.cc)"};
  return {Outcome::Skip, skip->second};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, filter;
  int threads = 2;
  bool verbose = false;
  double min_percent = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc)
      filter = argv[++i];
    else if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--min-pass-percent" && i + 1 < argc)
      min_percent = std::atof(argv[++i]);
    else if (a == "--verbose")
      verbose = true;
    else
      dir = a;
  }
  if (dir.empty() || !fs::is_directory(dir)) {
    std::fprintf(stderr,
                 "usage: fx_conformance [--filter S] [--threads N] [--verbose] "
                 "[--min-pass-percent P] TEST_DIR\n");
    return 2;
  }
  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().find(filter) != std::string::npos) {
      tests.push_back(e.path());
    }
  }
  std::sort(tests.begin(), tests.end());
  int passed = 0, failed = 0, inference_tests = 0, inference_passed = 0;
  std::vector<std::pair<std::string, std::string>> skipped;
  for (const auto& t : tests) {
    Outcome o = run_test(t, threads);
    const std::string name = t.filename().string();
    const bool inference = !fxconf::is_training_test(name);
    inference_tests += inference ? 1 : 0;
    if (o.kind == Outcome::Pass) {
      ++passed;
      inference_passed += inference ? 1 : 0;
      if (verbose) std::printf("PASS %s\n", name.c_str());
    } else if (o.kind == Outcome::Fail) {
      ++failed;
      std::printf("FAIL %s: %s\n", name.c_str(), o.reason.c_str());
    } else {
      skipped.emplace_back(name, o.reason);
    }
    std::fflush(stdout);
  }
  std::printf("skipped %zu tests:\n", skipped.size());
  for (const auto& [name, reason] : skipped)
    std::printf("  SKIP %s: %s\n", name.c_str(), reason.c_str());
  std::printf("%d passed, %d failed, %zu skipped\n", passed, failed, skipped.size());
  const double percent = inference_tests ? 100.0 * inference_passed / inference_tests : 100.0;
  std::printf("%.1f%% of %d tests that are not training-only pass (minimum %.1f%%)\n", percent,
              inference_tests, min_percent);
  if (percent + 1e-9 < min_percent) {
    std::printf("FAIL: pass percentage below the minimum\n");
    return 1;
  }
  return failed ? 1 : 0;
}
