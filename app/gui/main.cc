// SPDX-License-Identifier: Apache-2.0
// fusion-explorer [MODEL]: the desktop explorer.
//
//   --screenshot FILE   open MODEL, wait for the graph, save the window as a PNG, quit
//   --profile           after opening (and --accept-above), profile before/after with
//                       fxc in a child process; --screenshot then waits for the result
//   --measure           open MODEL, print time to first painted graph, to the model
//                       being ready (shapes and candidates in) and the longest UI-thread
//                       stall until then as JSON, quit (for docs/benchmarks.md)
//   --expand TEXT       with --measure: then open the group whose scope path is TEXT
//                       (what a double-click on its box does; its closed ancestors too)
//                       or reveal the node named TEXT, and time it from the request to
//                       the painted result (layout off the UI thread included)
//   --zoom fit|F        before the screenshot: fit the graph to the view, or zoom by F
//   --graph-only        with --screenshot: save the graph view alone, not the window
//                       (the dagre comparison pictures, bench/gui/)
//   --check FILE        open MODEL, wait until it is ready, write a JSON report of what
//                       each pane shows (an empty pane must say why), the errors and the
//                       dialogs that came up (views/pane_check.h), quit: 0 when the
//                       report is clean, 1 when not (with --screenshot, also the PNG)
#include <QApplication>
#include <QCommandLineParser>
#include <QDialog>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QIcon>
#include <QJsonDocument>
#include <QMessageBox>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/log.h"
#include "util/version.h"
#include "views/code_view.h"
#include "views/fused_graph_pane.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/main_window.h"
#include "views/pane_check.h"
#include "views/stall_meter.h"

using fx::views::MainWindow;

int main(int argc, char** argv) {
  QElapsedTimer since_start;
  since_start.start();
  // --version and --help must answer on a machine without a display (packaging test,
  // ssh sessions): they need no window, so use the offscreen platform for them.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--version" || a == "-v" || a == "--help" || a == "-h") && !std::getenv("DISPLAY") &&
        !std::getenv("WAYLAND_DISPLAY"))
      setenv("QT_QPA_PLATFORM", "offscreen", 0);
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("fusion-explorer"));
  QApplication::setOrganizationName(QStringLiteral("FusionExplorer"));
  QApplication::setApplicationVersion(QString::fromLatin1(fx::kVersion));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/fusion-explorer.svg")));
  QApplication::setStyle(QStringLiteral("Fusion"));

  QCommandLineParser cli;
  cli.setApplicationDescription(
      QStringLiteral("Find, review and measure operator fusions in ONNX models."));
  cli.addHelpOption();
  cli.addVersionOption();
  cli.addPositionalArgument(QStringLiteral("model"), QStringLiteral("ONNX model to open"),
                            QStringLiteral("[MODEL]"));
  QCommandLineOption screenshot(
      QStringLiteral("screenshot"),
      QStringLiteral("Save the window to FILE once the graph is shown, then quit."),
      QStringLiteral("FILE"));
  QCommandLineOption measure(QStringLiteral("measure"),
                             QStringLiteral("Print start-up figures as JSON, then quit."));
  QCommandLineOption device(QStringLiteral("device"),
                            QStringLiteral("Device profile (preset or JSON file)."),
                            QStringLiteral("NAME"));
  QCommandLineOption dark(QStringLiteral("dark"), QStringLiteral("Use the dark palette."));
  QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size WxH."),
                          QStringLiteral("WxH"));
  QCommandLineOption overlay(QStringLiteral("overlay"),
                             QStringLiteral("Colour nodes by bytes or flops."),
                             QStringLiteral("KIND"));
  QCommandLineOption accept(
      QStringLiteral("accept-above"),
      QStringLiteral("Accept groups at or above this traffic reduction (0-1) after opening."),
      QStringLiteral("T"));
  QCommandLineOption find(QStringLiteral("find"),
                          QStringLiteral("Reveal the first node matching TEXT after opening."),
                          QStringLiteral("TEXT"));
  QCommandLineOption expand(
      QStringLiteral("expand"),
      QStringLiteral("With --measure: open the group with scope path TEXT (or reveal node TEXT) "
                     "and time it until painted."),
      QStringLiteral("TEXT"));
  QCommandLineOption profile(
      QStringLiteral("profile"),
      QStringLiteral("Profile before/after (fxc profile --plan) once the model is open."));
  QCommandLineOption side(QStringLiteral("side-by-side"),
                          QStringLiteral("Show the fused graph beside the original."));
  QCommandLineOption generate(
      QStringLiteral("generate"),
      QStringLiteral("Show the generated source of the largest accepted group (Generate dock)."));
  QCommandLineOption zoom(
      QStringLiteral("zoom"),
      QStringLiteral("Before the screenshot: fit the graph (\"fit\") or zoom by FACTOR."),
      QStringLiteral("FACTOR"));
  QCommandLineOption graph_only(
      QStringLiteral("graph-only"),
      QStringLiteral("With --screenshot: save the graph view alone, not the whole window."));
  QCommandLineOption check(
      QStringLiteral("check"),
      QStringLiteral("Write a JSON report of the panes, errors and dialogs to FILE once the model "
                     "is ready, then quit (1 when it has problems)."),
      QStringLiteral("FILE"));
  for (const auto* o : {&screenshot, &measure, &device, &dark, &size, &overlay, &accept, &find,
                        &profile, &side, &generate, &expand, &check, &zoom, &graph_only})
    cli.addOption(*o);
  cli.process(app);
  fx::setup_logging(fx::LogLevel::Normal);

  MainWindow window;
  if (cli.isSet(device)) {
    fx::views::AnalysisSettings s;
    s.device = cli.value(device);
    window.set_analysis_settings(s);
  }
  if (cli.isSet(dark)) window.set_dark(true);
  if (cli.isSet(size)) {
    const QStringList wh = cli.value(size).split(QLatin1Char('x'));
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  }
  window.show();

  const QStringList args = cli.positionalArguments();
  const bool scripted = cli.isSet(screenshot) || cli.isSet(measure) || cli.isSet(check);
  if (scripted && args.isEmpty()) {
    std::fprintf(stderr, "fusion-explorer: --screenshot, --measure and --check need a MODEL\n");
    return 2;
  }
  fx::views::StallMeter stalls;
  double first_paint_ms = -1;
  double ready_ms = -1;       // shapes and analysis in too
  double open_stall_ms = -1;  // longest stall while opening, when --expand measures more
  double expand_ms = -1, expand_stall_ms = -1;
  QStringList check_errors, check_dialogs;
  auto write_check = [&] {
    QJsonObject report =
        fx::views::check_report(args.isEmpty() ? QString() : QFileInfo(args.front()).fileName(),
                                fx::views::pane_states(window), check_errors, check_dialogs);
    // The graph analysed, to compare with `fxc inspect` / `fxc analyze` (the same
    // canonical graph, the same kernel count).
    if (const auto* doc = window.document()) {
      report[QStringLiteral("nodes")] = qint64(doc->graph().node_count());
      if (doc->analysis)
        report[QStringLiteral("kernels_before")] = qint64(doc->analysis->kernels_before);
    }
    QFile f(cli.value(check));
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(report).toJson()) < 0) {
      std::fprintf(stderr, "fusion-explorer: --check: cannot write %s\n",
                   qPrintable(cli.value(check)));
      return 3;
    }
    return report.value(QStringLiteral("ok")).toBool() ? 0 : 1;
  };
  if (cli.isSet(check)) {
    // An error is recorded, not fatal: the report says what the user would have seen.
    // Once the model failed to open, nothing more comes: report after a moment.
    QObject::connect(&window, &MainWindow::failed, &app, [&](const QString& m) {
      check_errors << m.section(QLatin1Char('\n'), 0, 0);
      if (!window.document())
        QTimer::singleShot(500, &app, [&] {
          if (cli.isSet(screenshot)) window.grab().save(cli.value(screenshot));
          QApplication::exit(write_check());
        });
    });
    // A dialog (an error box on a real display) is recorded and closed: nobody is there
    // to click it, and a modal one would stop the run.
    auto* dialogs = new QTimer(&app);
    QObject::connect(dialogs, &QTimer::timeout, &app, [&] {
      for (QWidget* w : QApplication::topLevelWidgets()) {
        auto* d = qobject_cast<QDialog*>(w);
        if (!d || !d->isVisible()) continue;
        QString text = d->windowTitle();
        if (auto* box = qobject_cast<QMessageBox*>(d)) text += QStringLiteral(": ") + box->text();
        check_dialogs << text;
        d->reject();
      }
    });
    dialogs->start(100);
    // A model that never becomes ready is a finding too, not a hang of the corpus run.
    QTimer::singleShot(180'000, &app, [&] {
      check_errors << QStringLiteral("not ready after 180 s");
      QApplication::exit(write_check());
    });
  } else if (scripted) {
    QObject::connect(&window, &MainWindow::failed, &app, [&](const QString& m) {
      std::fprintf(stderr, "fusion-explorer: %s\n", qPrintable(m));
      QApplication::exit(2);
    });
  }
  if (scripted) {
    // What to do once the graph is painted and the model is ready (shapes and candidates
    // arrive after the first paint).
    auto act = [&] {
      if (cli.isSet(overlay)) {
        // Applied through the menu action so the checkmark follows.
        for (QAction* a : window.findChildren<QAction*>())
          if (a->text().contains(cli.value(overlay) == QLatin1String("flops")
                                     ? QStringLiteral("FLOPs")
                                     : QStringLiteral("Bytes moved")))
            a->trigger();
      }
      if (cli.isSet(accept)) window.accept_above(cli.value(accept).toDouble());
      auto finish = [&] {
        if (cli.isSet(zoom)) {
          if (cli.value(zoom) == QLatin1String("fit"))
            window.view()->fit();
          else
            window.view()->zoom_by(cli.value(zoom).toDouble());
          QApplication::processEvents();
        }
        if (cli.isSet(screenshot)) {
          const QPixmap shot = cli.isSet(graph_only) ? window.view()->grab() : window.grab();
          if (!shot.save(cli.value(screenshot))) return QApplication::exit(3);
        }
        if (cli.isSet(check)) return QApplication::exit(write_check());
        if (cli.isSet(measure)) {
          std::string expanded;
          if (expand_ms >= 0) {
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          ", \"expand_ms\": %.1f, \"expand_stall_ms\": %.1f, \"boxes\": %d",
                          expand_ms, expand_stall_ms, window.scene()->box_count());
            expanded = buf;
          }
          std::printf(
              "{\"model\": \"%s\", \"nodes\": %zu, \"first_paint_ms\": %.1f, "
              "\"ready_ms\": %.1f, \"longest_stall_ms\": %.1f%s}\n",
              qPrintable(QFileInfo(args.front()).fileName()),
              window.document() ? window.document()->graph().node_count() : 0, first_paint_ms,
              ready_ms, open_stall_ms >= 0 ? open_stall_ms : stalls.longest_ms(), expanded.c_str());
        }
        QApplication::exit(0);
      };
      if (cli.isSet(profile)) {
        // `finish` by value: this lambda outlives the scope it is declared in.
        QObject::connect(&window, &MainWindow::profile_finished, &app, [&, finish](bool ok) {
          if (!ok) return QApplication::exit(2);  // `failed` printed why
          QTimer::singleShot(300, &app, finish);
        });
        window.profile();
      } else if (cli.isSet(side)) {
        QObject::connect(window.fused_pane(), &fx::views::FusedGraphPane::shown, &app,
                         [&, finish] { QTimer::singleShot(200, &app, finish); });
        window.set_side_by_side(true);
      } else if (cli.isSet(generate)) {
        QObject::connect(window.code_dock(), &fx::views::CodeDock::generated, &app,
                         [&, finish] { QTimer::singleShot(200, &app, finish); });
        int best = -1;
        const auto& groups = window.document()->plan.groups();
        for (std::size_t i = 0; i < groups.size(); ++i)
          if (groups[i].status == fx::GroupStatus::Accepted) {
            // Prefer a group with generated C++ (not a oneDNN Conv), then the largest.
            auto rank = [&](std::size_t k) {
              return std::pair(groups[k].ops.empty() || groups[k].ops.front() != "Conv",
                               groups[k].nodes.size());
            };
            if (best < 0 || rank(i) > rank(std::size_t(best))) best = int(i);
          }
        if (best < 0) return QApplication::exit(2);
        window.select_group(best);
        window.generate(best);
      } else if (cli.isSet(expand)) {
        // The group with that scope path (with or without the leading '/'), else a node.
        const fx::views::ModelDocument& doc = *window.document();
        const std::string target = cli.value(expand).toStdString();
        int group = -1;
        std::string bare = target;
        bare.erase(0, bare.find_first_not_of('/'));
        for (std::size_t g = 1; g < doc.tree->group_count() && group < 0; ++g)
          if (!doc.tree->group(int(g)).path.empty() && doc.tree->group(int(g)).path == bare)
            group = int(g);
        const fx::NodeId node = group < 0 ? doc.drawn_graph().find_node(target) : fx::kNoNode;
        if (group < 0 && node == fx::kNoNode) {
          std::fprintf(stderr, "fusion-explorer: --expand: no scope or node '%s'\n",
                       target.c_str());
          return QApplication::exit(2);
        }
        // From the request to the first paint after the new layout is in the scene.
        open_stall_ms = stalls.longest_ms();
        stalls.reset_longest();
        auto clock = std::make_shared<QElapsedTimer>();
        auto shown = std::make_shared<bool>(false);
        QObject::connect(&window, &MainWindow::layout_shown, &app, [&, shown] {
          *shown = true;
          window.view()->viewport()->update();
        });
        QObject::connect(window.view(), &fx::views::GraphView::painted, &app,
                         [&, shown, clock, finish] {
                           if (!*shown || expand_ms >= 0) return;
                           expand_ms = double(clock->nsecsElapsed()) / 1e6;
                           expand_stall_ms = stalls.longest_ms();
                           QTimer::singleShot(150, &app, finish);
                         });
        clock->start();
        if (group >= 0)
          window.open_group(group);
        else
          window.reveal_node(node);
        if (!window.is_busy()) {  // already on screen: nothing to lay out
          *shown = true;
          window.view()->viewport()->update();
        }
      } else if (cli.isSet(find)) {
        QObject::connect(&window, &MainWindow::layout_shown, &app,
                         [&, finish] { QTimer::singleShot(150, &app, finish); });
        window.reveal_node(window.document()->graph().find_node(cli.value(find).toStdString()));
        if (!window.is_busy()) QTimer::singleShot(150, &app, finish);
      } else {
        finish();
      }
    };
    bool acted = false;
    auto maybe_act = [&, act] {
      if (first_paint_ms < 0 || ready_ms < 0 || acted) return;
      acted = true;
      // Let queued work (status bar, table) settle, then act.
      QTimer::singleShot(cli.isSet(measure) ? 300 : 150, &app, act);
    };
    QObject::connect(window.view(), &fx::views::GraphView::first_graph_painted, &app,
                     [&, maybe_act] {
                       if (first_paint_ms >= 0) return;
                       first_paint_ms = double(since_start.nsecsElapsed()) / 1e6;
                       maybe_act();
                     });
    QObject::connect(&window, &MainWindow::model_opened, &app, [&, maybe_act] {
      if (ready_ms >= 0) return;
      ready_ms = double(since_start.nsecsElapsed()) / 1e6;
      maybe_act();
    });
    stalls.start();
  }
  if (!args.isEmpty()) window.open_model(args.front());
  return app.exec();
}
