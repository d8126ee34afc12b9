// SPDX-License-Identifier: Apache-2.0
#pragma once
// A model document built on the test's thread, the way DocumentController builds it in
// workers (open, shapes, analysis), for the controller tests that need one without a
// window or a job. The H100 profile: cpu-host would run a calibration.
#include <QFont>

#include <memory>

#include "views/graph_scene.h"
#include "views/model_document.h"

namespace fx::views::test {

inline const QString kTinyCnn = QStringLiteral(FX_RESOURCES_DIR "/models/tiny_cnn.onnx");
inline const QString kTinyTransformer =
    QStringLiteral(FX_RESOURCES_DIR "/models/tiny_transformer.onnx");

inline AnalysisSettings h100_settings() {
  AnalysisSettings s;
  s.device = QStringLiteral("nvidia-h100");
  return s;
}

inline std::shared_ptr<ModelDocument> analysed_document(const QString& path = kTinyCnn) {
  const AnalysisSettings settings = h100_settings();
  auto doc = open_document(path, settings, label_metrics(QFont()), {});
  // Shapes as the controller reads them: a new document when shape-folding removed nodes.
  FoldedReading folded = read_with_shapes(*doc, false, label_metrics(QFont()));
  if (folded.doc)
    doc = folded.doc;
  else
    apply_value_types(doc->model, std::move(folded.types));
  doc->shapes_folded = true;
  apply_analysis(*doc, std::move(*run_analysis(doc->graph(), doc->path, settings,
                                               doc->model.assumed_dims, true)));
  return doc;
}

inline QStringList group_ids(const ModelDocument& doc) {
  QStringList ids;
  for (const auto& g : doc.plan.groups()) ids << QString::fromStdString(g.id);
  return ids;
}

}  // namespace fx::views::test
