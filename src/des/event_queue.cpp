// A d-ary heap with hole-based sifting (one move per level instead of a swap). d = 2:
// measured against 4 and 8 on the DES benchmark (bench/des_bench.cpp), the binary heap
// was fastest for the simulator's heaps of a few hundred pending events.
#include "rapid/des/event_queue.hpp"

namespace rapid::des {

namespace {
constexpr size_t kArity = 2;
}

void EventQueue::push(SimTime time, uint32_t kind, int32_t target, uint64_t data) {
  const Event e{time, next_seq_++, kind, target, data};
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventQueue::pop() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  while (true) {
    const size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = first + kArity < n ? first + kArity : n;
    for (size_t c = first + 1; c < end; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

}  // namespace rapid::des
