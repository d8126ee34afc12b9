// SPDX-License-Identifier: Apache-2.0
#include "views/report_pdf.h"

#include <QFile>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QUrl>

#include "util/error.h"

namespace fx::views {

void write_report_pdf(const QString& html, const QString& path) {
  QTextDocument doc;
  // Each <svg>…</svg> becomes an <img> of the same size backed by a rendered image.
  static const QRegularExpression svg_re(QStringLiteral("<svg\\b.*?</svg>"),
                                         QRegularExpression::DotMatchesEverythingOption);
  QString body;
  qsizetype from = 0;
  int n = 0;
  for (auto it = svg_re.globalMatch(html); it.hasNext();) {
    const auto m = it.next();
    body += html.mid(from, m.capturedStart() - from);
    from = m.capturedEnd();
    QSvgRenderer svg(m.captured().toUtf8());
    if (!svg.isValid()) continue;
    const QSize size = svg.defaultSize();
    QImage img(size * 2, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::white);
    {
      QPainter p(&img);
      p.setRenderHint(QPainter::Antialiasing);
      svg.render(&p);
    }
    const QUrl url(QStringLiteral("fxchart:%1").arg(n++));
    doc.addResource(QTextDocument::ImageResource, url, img);
    body += QStringLiteral("<img src=\"%1\" width=\"%2\" height=\"%3\">")
                .arg(url.toString())
                .arg(size.width())
                .arg(size.height());
  }
  body += html.mid(from);
  doc.setHtml(body);

  QFile probe(path);
  if (!probe.open(QIODevice::WriteOnly))
    throw FileError(path.toStdString(), "cannot write: " + probe.errorString().toStdString());
  probe.close();
  QPdfWriter writer(path);
  writer.setPageSize(QPageSize(QPageSize::A4));
  writer.setPageMargins(QMarginsF(12, 12, 12, 12), QPageLayout::Millimeter);
  writer.setTitle(QStringLiteral("Fusion Explorer report"));
  writer.setCreator(QStringLiteral("Fusion Explorer"));
  doc.setPageSize(QSizeF(writer.pageLayout().paintRectPixels(writer.resolution()).size()));
  // Text at a readable size on paper (the document's units are the writer's pixels).
  QFont font = doc.defaultFont();
  font.setPointSizeF(9);
  doc.setDefaultFont(font);
  doc.print(&writer);
  if (QFile(path).size() == 0) throw FileError(path.toStdString(), "the PDF writer wrote nothing");
}

}  // namespace fx::views
