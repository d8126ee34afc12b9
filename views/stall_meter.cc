// SPDX-License-Identifier: Apache-2.0
#include "views/stall_meter.h"

#include <algorithm>

namespace fx::views {

StallMeter::StallMeter(QObject* parent) : QObject(parent) {
  timer_.setInterval(5);
  timer_.setTimerType(Qt::PreciseTimer);
  connect(&timer_, &QTimer::timeout, this, [this] {
    const qint64 now = clock_.nsecsElapsed();
    // The expected interval is not a stall: count only the time beyond it.
    longest_ms_ = std::max(longest_ms_, double(now - last_ns_) / 1e6 - 5.0);
    last_ns_ = now;
    ++ticks_;
  });
}

void StallMeter::start() {
  longest_ms_ = 0;
  ticks_ = 0;
  clock_.start();
  last_ns_ = 0;
  timer_.start();
}

}  // namespace fx::views
