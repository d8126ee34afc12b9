// SPDX-License-Identifier: Apache-2.0
// Renders the application's SVG icon to PNGs: render_icon ICON.svg OUTDIR SIZE...
// writes OUTDIR/<S>x<S>/fusion-explorer.png for each size. Build-time tool only.

#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  if (argc < 4) {
    std::fprintf(stderr, "usage: render_icon ICON.svg OUTDIR SIZE...\n");
    return 2;
  }
  QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
  if (!svg.isValid()) {
    std::fprintf(stderr, "render_icon: %s: not a valid SVG\n", argv[1]);
    return 2;
  }
  for (int i = 3; i < argc; ++i) {
    const int s = std::atoi(argv[i]);
    QImage img(s, s, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::transparent);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    svg.render(&p);
    p.end();
    const QString dir = QStringLiteral("%1/%2x%2").arg(QString::fromLocal8Bit(argv[2])).arg(s);
    QDir().mkpath(dir);
    if (!img.save(dir + QStringLiteral("/fusion-explorer.png"))) {
      std::fprintf(stderr, "render_icon: cannot write %s\n", qPrintable(dir));
      return 1;
    }
  }
  return 0;
}
