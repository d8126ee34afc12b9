// SPDX-License-Identifier: Apache-2.0
// fxc: Fusion Explorer's command line. Wiring only: every subcommand calls core.

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "commands.h"
#include "util/error.h"
#include "util/log.h"
#include "util/version.h"

int main(int argc, char** argv) {
  CLI::App app{"fxc: find, generate and measure operator fusions in ONNX models", "fxc"};
  app.set_version_flag("--version", std::string("fxc (Fusion Explorer) ") + fx::kVersion);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug detail to stderr");
  app.add_flag("-q,--quiet", quiet, "Log errors only");
  app.require_subcommand(1);
  app.footer(
      "Examples (a typical session, on the bundled sample model):\n"
      "  fxc inspect resources/models/tiny_cnn.onnx       # ops, parameters, inputs, outputs\n"
      "  fxc analyze resources/models/tiny_cnn.onnx --device nvidia-h100   # fusion candidates\n"
      "  fxc analyze resources/models/tiny_cnn.onnx --plan-out plan.json --accept-all\n"
      "  fxc export resources/models/tiny_cnn.onnx --plan plan.json --out fused.onnx\n"
      "  fxc report resources/models/tiny_cnn.onnx --plan plan.json --out report.html\n"
      "An installed package keeps the samples in /usr/share/fusion-explorer/samples/.\n"
      "\n"
      "Every command reads a model in canonical form (Constant nodes as weights, Identity\n"
      "and constant shape arithmetic folded, BatchNormalization folded into its Conv, dead\n"
      "nodes and duplicate weights gone; see --disable-pass and --no-canonicalize) and\n"
      "works without --dim: unbound symbolic dims are assumed (batch-like 1, sequence 128,\n"
      "waveform samples 16000, image height/width 224, other 64) and\n"
      "printed as 'assumed: NAME=V, ...'; bind them with --dim NAME=V.\n"
      "\n"
      "Device profiles: cpu-host (measured here, see 'fxc calibrate'), nvidia-h100,\n"
      "ascend-910b, or a JSON file. Every estimate names the profile that produced it.\n"
      "Exit status: 0 success; 2 bad input or usage (one line naming the file and the\n"
      "cause); 3 internal error.\n"
      "Run 'fxc SUBCOMMAND --help' for a subcommand's options and examples; man fxc.");

  fxc::Runner run;
  fxc::register_inspect(app, run);
  fxc::register_run(app, run);
  fxc::register_profile(app, run);
  fxc::register_analyze(app, run);
  fxc::register_codegen(app, run);
  fxc::register_export(app, run);
  fxc::register_report(app, run);
  fxc::register_ops(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  fx::setup_logging(quiet     ? fx::LogLevel::Quiet
                    : verbose ? fx::LogLevel::Verbose
                              : fx::LogLevel::Normal);
  try {
    return run ? run() : 2;
  } catch (const fx::Error& e) {
    std::fprintf(stderr, "fxc: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fxc: internal error: %s\n", e.what());
    return 3;
  }
}
