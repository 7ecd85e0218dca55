#include "rapid/common/eval_context.hpp"

#include <atomic>
#include <cstddef>

namespace rapid {

EvalContext& EvalContext::own() noexcept {
  thread_local EvalContext context;  // a thread no scheduler runs: its own, freed at its end
  return context;
}

EvalContext::Scope::Scope(EvalContext& ctx) noexcept : previous_(installed_) {
  installed_ = &ctx;
}

EvalContext::Scope::~Scope() {
  installed_ = previous_;
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
