// SPDX-License-Identifier: Apache-2.0
#pragma once
// Linked navigation of two graph views (the original and the fused graph side by
// side): when one view zooms, pans or is centred, the other moves so that the nodes
// matching the ones at the centre of the leader sit at the same place on screen, at
// the same zoom. Which nodes match is the caller's (a kernel's members, or the fused
// node that holds an original); either view may lead.

#include <QObject>

#include <functional>
#include <vector>

#include "ir/graph.h"

namespace fx::views {

class GraphView;

class ViewSync : public QObject {
  Q_OBJECT
 public:
  // The nodes of the other scene that a node of this one stands for.
  using Mapping = std::function<std::vector<NodeId>(NodeId)>;

  // Both views show a GraphScene.
  ViewSync(GraphView* first, GraphView* second, QObject* parent = nullptr);

  void set_mappings(Mapping first_to_second, Mapping second_to_first);
  // Whether the two scenes show matching graphs now (e.g. the fused graph was built
  // from the document shown); no sync otherwise.
  void set_ready(std::function<bool()> ready) { ready_ = std::move(ready); }
  void set_linked(bool on);
  bool linked() const { return linked_; }

  // Moves the other view to follow `second` (true) or `first` (false). Returns whether
  // it moved.
  bool follow(bool from_second);

  // The move itself: `dst` shows `matches` where `src` shows the closed box nearest its
  // centre, at src's zoom. False when no box is near or no match is on dst's scene.
  static bool map_view(GraphView& src, GraphView& dst, const Mapping& matches);

 private:
  GraphView* first_;
  GraphView* second_;
  Mapping first_to_second_, second_to_first_;
  std::function<bool()> ready_;
  bool linked_ = true;
  bool syncing_ = false;  // re-entrancy guard: the follower's move is not a new lead
};

}  // namespace fx::views
