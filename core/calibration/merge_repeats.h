// SPDX-License-Identifier: Apache-2.0
#pragma once
// Repeats: results of one model and plan, each measured by its own process. A group's
// measured saving differs between processes more than its kernels' spread within one
// run says (on the 2-core bench machine 5-12% of the saving against 1-3%: memory
// placement, load that changes over seconds), so one run's saving carries that error
// whatever the statistic. Merged, a group's saving is the median over the repeats, and
// its noise the standard error of that median from the repeats' spread (1.2533 x sample
// standard deviation / sqrt(n)), never below the within-run noise / sqrt(n). Groups are
// matched by id, in the first repeat's order; one missing from a repeat is merged over
// the repeats that have it. The first repeat's terms are kept (they are the same).

#include <vector>

#include "analysis/group_terms.h"

namespace fx {

std::vector<GroupTermsSample> merge_repeats(
    const std::vector<std::vector<GroupTermsSample>>& repeats);

}  // namespace fx
