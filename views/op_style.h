// SPDX-License-Identifier: Apache-2.0
#pragma once
// Colours of the graph view: op kinds (Netron-like families), plan status, and the
// overlay gradient; each in a light and a dark variant.

#include <QColor>
#include <QString>

#include "analysis/analysis_result.h"
#include "analysis/op_kind.h"
#include "ir/shape.h"

namespace fx::views {

struct OpStyle {
  QColor fill;
  QColor border;
  QColor text;
};

OpStyle op_style(OpKind kind, bool dark);
OpStyle group_box_style(bool dark);
QColor status_color(GroupStatus status);  // hull colour of a fusion group
// Overlay gradient from cool (0) to hot (1), for bytes/FLOPs/time per node.
QColor heat_color(double t);
QString op_kind_label(OpKind kind);

// "conv_bn_act at /layer1/conv1": a group as a reader recognises it (the id beside it
// is what files and commands use).
QString group_label(const FusionGroup& group);

// Human figures, IEC for bytes as in the reports: "1.2 MiB", "3.4 GFLOP", "12.5 µs".
QString format_bytes(double bytes);
QString format_flops(double flops);
QString format_seconds(double seconds);
// A tensor shape as the graph and the inspector show it: "[1,3,224,224]", "[batch,768]",
// "?" for an unknown rank, and "scalar" for rank 0 (as the boxes list scalar constants).
QString format_shape(const Shape& shape);

}  // namespace fx::views
