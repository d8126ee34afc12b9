// SPDX-License-Identifier: Apache-2.0
// fxc run: run a model once on the CPU runtime and write its outputs as TensorProto
// files (output_<i>.pb in graph-output order). Inputs come from TensorProto files
// or are random with a seed.

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "commands.h"
#include "ir/graph.h"
#include "model_options.h"
#include "onnx/model_loader.h"
#include "onnx/tensor_file.h"
#include "profile/random_inputs.h"
#include "runtime/executor.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace fxc {
namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE.pb
  ModelOptions mo;
  uint64_t seed = 0;
  int threads = 0;
  std::string output_dir;
  bool save_inputs = false;
  int runs = 1;
};

int run_run(const RunOptions& o) {
  auto m = load_model(o.model, o.mo);
  print_model_header(m);
  const fx::Graph& g = m.graph;
  std::map<std::string, std::string> files;
  for (const auto& spec : o.inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw fx::Error("--input expects NAME=FILE.pb, got '" + spec + "'");
    std::string name = spec.substr(0, eq);
    if (g.find_value(name) == fx::kNoValue)
      throw fx::Error("--input: the model has no input '" + name + "'");
    files[name] = spec.substr(eq + 1);
  }
  // Random inputs come from the profiler's generator, so that `fxc run` and
  // `fxc profile` with the same seed see the same data.
  std::map<std::string, fx::Tensor> inputs;
  bool all_from_files = true;
  for (fx::ValueId id : g.runtime_inputs()) all_from_files &= files.count(g.value(id).name) > 0;
  if (!all_from_files) inputs = fx::random_inputs(g, o.seed);
  for (const auto& [name, file] : files) {
    inputs[name] = fx::Tensor::from_data(fx::read_tensor_file(file));
  }
  const int64_t opset = default_opset(m.info);
  fx::Stopwatch build;
  fx::Executor ex(g, fx::ExecutorOptions{o.threads, opset});
  double build_ms = build.elapsed_ms();
  // The first run creates oneDNN primitives and sizes the arena; later runs are
  // the steady state, reported as a median when --runs asks for several.
  fx::Stopwatch timer;
  auto outs = ex.run(inputs);
  double run_ms = timer.elapsed_ms();
  std::vector<double> times;
  for (int i = 1; i < o.runs; ++i) {
    fx::Stopwatch t;
    outs = ex.run(inputs);
    times.push_back(t.elapsed_ms());
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    fmt::print("first run {:.2f} ms; median of {} further runs {:.2f} ms (min {:.2f})\n", run_ms,
               times.size(), times[times.size() / 2], times.front());
  }

  std::filesystem::create_directories(o.output_dir);
  if (o.save_inputs) {
    auto ids = g.runtime_inputs();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::string& name = g.value(ids[i]).name;
      fx::write_tensor_file(fmt::format("{}/input_{}.pb", o.output_dir, i),
                            *inputs[name].to_tensor_data(), name);
    }
  }
  fmt::print(
      "{}: {} steps, {} threads, built in {:.1f} ms, ran in {:.1f} ms, peak activations {} bytes\n",
      o.model, ex.steps().size(), ex.threads(), build_ms, run_ms, ex.peak_activation_bytes());
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const std::string& name = g.value(g.outputs()[i]).name;
    std::string path = fmt::format("{}/output_{}.pb", o.output_dir, i);
    fx::write_tensor_file(path, *outs[i].to_tensor_data(), name);
    fmt::print("  {} {} -> {}\n", name, outs[i].str(), path);
  }
  return 0;
}

}  // namespace

void register_run(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd =
      app.add_subcommand("run", "Run a model once on the CPU runtime and write its outputs");
  cmd->add_option("model", opts->model, "ONNX model file")->required();
  cmd->add_option("--input", opts->inputs,
                  "Input from a TensorProto file, NAME=FILE.pb (repeatable)");
  cmd->add_option("--seed", opts->seed,
                  "Seed for random inputs (as fxc profile: floats in [-1,1), "
                  "index inputs in [0, size of the axis they index), other ints in {0,1}, "
                  "bools fair coins)");
  cmd->add_option("--threads", opts->threads, "Intra-op threads (default: all cores)");
  cmd->add_option("--output-dir", opts->output_dir, "Directory for output_<i>.pb")->required();
  add_model_options(cmd, opts->mo);
  cmd->add_option("--runs", opts->runs, "Run N times and print the median time of runs 2..N")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--save-inputs", opts->save_inputs, "Also write the inputs used as input_<i>.pb");
  cmd->footer(
      "Examples:\n"
      "  fxc run resources/models/tiny_cnn.onnx --seed 1 --save-inputs --output-dir out/\n"
      "  fxc run resnet18.onnx --seed 1 --threads 2 --output-dir out/\n"
      "  fxc run gpt2.onnx --dim batch=1 --dim seq=64 --input input_ids=ids.pb --output-dir out/");
  cmd->callback([opts, &run] { run = [opts] { return run_run(*opts); }; });
}

}  // namespace fxc
