// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measures how long the UI thread goes without running its event loop: a 5 ms timer
// whose late firings are the stalls. The longest gap is what a user feels as a freeze.

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace fx::views {

class StallMeter : public QObject {
  Q_OBJECT
 public:
  explicit StallMeter(QObject* parent = nullptr);
  void start();
  void stop() { timer_.stop(); }
  // Starts a new longest-stall figure (the timer keeps running).
  void reset_longest() { longest_ms_ = 0; }
  double longest_ms() const { return longest_ms_; }
  int ticks() const { return ticks_; }

 private:
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 last_ns_ = 0;
  double longest_ms_ = 0;
  int ticks_ = 0;
};

}  // namespace fx::views
