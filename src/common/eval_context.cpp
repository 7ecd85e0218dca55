#include "rapid/common/eval_context.hpp"

#include <atomic>
#include <cstddef>

namespace rapid {

namespace {
// The context a Scope installed on this thread (null: none). The only thread_local of the
// evaluation path: it points at the owner's context, it owns nothing.
thread_local EvalContext* installed = nullptr;
}  // namespace

EvalContext& EvalContext::current() noexcept {
  if (installed) [[likely]]
    return *installed;
  thread_local EvalContext own;  // a thread no scheduler runs: its own, freed at its end
  return own;
}

EvalContext::Scope::Scope(EvalContext& ctx) noexcept : previous_(installed) {
  installed = &ctx;
}

EvalContext::Scope::~Scope() {
  installed = previous_;
}

size_t EvalContext::next_slot() noexcept {
  static std::atomic<size_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void EvalContext::clear() noexcept {
  for (size_t i = slots_.size(); i-- > 0;)
    if (slots_[i].object) slots_[i].destroy(slots_[i].object);
  slots_.clear();
}

}  // namespace rapid
