// SPDX-License-Identifier: Apache-2.0
#include "runtime/nested_steps.h"

namespace fx {

namespace {
thread_local const detail::NestedScope* tl_scope = nullptr;
thread_local detail::NestedScope tl_root;  // the scope ScopedNestedObserver installs
}  // namespace

ScopedNestedObserver::ScopedNestedObserver(NestedStepObserver observer)
    : observer_(std::move(observer)), saved_(tl_scope) {
  tl_root = detail::NestedScope{&observer_, "", "", 0};
  tl_scope = &tl_root;
}

ScopedNestedObserver::~ScopedNestedObserver() {
  tl_scope = static_cast<const detail::NestedScope*>(saved_);
}

namespace detail {

const NestedScope* current_nested_scope() {
  return tl_scope;
}

EnterNestedScope::EnterNestedScope(const NestedScope& outer, const std::string& node,
                                   const std::string& attr)
    : scope_{outer.observer, outer.prefix + node + "/" + attr + "/",
             outer.parent.empty() ? node : outer.parent, outer.depth + 1},
      saved_(tl_scope) {
  tl_scope = &scope_;
}

EnterNestedScope::~EnterNestedScope() {
  tl_scope = saved_;
}

}  // namespace detail

}  // namespace fx
