// SPDX-License-Identifier: Apache-2.0
#include "views/view_sync.h"

#include "views/graph_scene.h"
#include "views/graph_view.h"

namespace fx::views {

ViewSync::ViewSync(GraphView* first, GraphView* second, QObject* parent)
    : QObject(parent), first_(first), second_(second) {
  connect(first_, &GraphView::viewport_changed, this, [this] { follow(false); });
  connect(second_, &GraphView::viewport_changed, this, [this] { follow(true); });
}

void ViewSync::set_mappings(Mapping first_to_second, Mapping second_to_first) {
  first_to_second_ = std::move(first_to_second);
  second_to_first_ = std::move(second_to_first);
}

void ViewSync::set_linked(bool on) {
  linked_ = on;
  if (on) follow(false);
}

bool ViewSync::follow(bool from_second) {
  if (syncing_ || !linked_ || (ready_ && !ready_())) return false;
  const Mapping& m = from_second ? second_to_first_ : first_to_second_;
  if (!m) return false;
  syncing_ = true;
  const bool moved = from_second ? map_view(*second_, *first_, m) : map_view(*first_, *second_, m);
  syncing_ = false;
  return moved;
}

bool ViewSync::map_view(GraphView& src, GraphView& dst, const Mapping& matches) {
  const auto* src_scene = qobject_cast<const GraphScene*>(src.scene());
  const auto* dst_scene = qobject_cast<const GraphScene*>(dst.scene());
  if (!src_scene || !dst_scene) return false;
  const QPointF src_centre = QRectF(src.viewport()->rect()).center();
  const int box = src_scene->closed_box_near(src.mapToScene(src_centre.toPoint()));
  const NodeId lead = src_scene->node_of_box(box);
  if (lead == kNoNode) return false;
  QRectF target;
  for (NodeId n : matches(lead)) target |= dst_scene->node_rect(n);
  if (target.isEmpty()) return false;
  // Same zoom, and the target where the lead box is on screen (not merely centred:
  // the box nearest the centre is rarely exactly at it).
  const double z = src.zoom();
  const QPointF offset =
      (QPointF(src.mapFromScene(src_scene->box_rect(box).center())) - src_centre) / z;
  dst.setTransform(QTransform::fromScale(z, z));
  dst.centerOn(target.center() - offset);
  emit dst.viewport_changed();  // the minimap, when the scroll did not move
  return true;
}

}  // namespace fx::views
