// The state one evaluating thread keeps from point to point (docs/architecture.md
// "Per-thread state"): the memos of op-template times, pipeline programs and GEMM times, the
// DES's simulator, the enumerator's last decode, and the scratch buffers that keep an
// evaluation free of allocation. The scheduler owns one context per worker thread and
// installs it for that thread (Scope); each module keeps its part as a type of its own and
// reads it with current().get<T>(). Everything goes with the context: nothing is left on the
// thread, and no module frees another's caches by name.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace rapid {

class EvalContext {
 public:
  EvalContext() = default;
  ~EvalContext() { clear(); }
  EvalContext(EvalContext&& o) noexcept : slots_(std::move(o.slots_)) { o.slots_.clear(); }
  EvalContext& operator=(EvalContext&&) = delete;
  EvalContext(const EvalContext&) = delete;
  EvalContext& operator=(const EvalContext&) = delete;

  /// The calling thread's context: the one a Scope installed, else the thread's own (a test's
  /// or a single `rapid predict`'s thread; freed when the thread ends).
  static EvalContext& current() noexcept {
    if (installed_) [[likely]]
      return *installed_;
    return own();
  }

  /// Makes `ctx` the calling thread's context for the scope's life, the previous one after.
  class Scope {
   public:
    explicit Scope(EvalContext& ctx) noexcept;
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    EvalContext* previous_;
  };

  /// This context's one T, value-initialised on first use.
  template <class T>
  T& get() {
    static const size_t slot = next_slot();
    if (slot < slots_.size() && slots_[slot].object) [[likely]]
      return *static_cast<T*>(slots_[slot].object);
    return make<T>(slot);
  }

  /// A buffer of one call site, reused from call to call: `Site` a tag type of the site
  /// (`struct Site;` declared there), T the buffer, value-initialised on first use.
  template <class Site, class T>
  T& buffer() {
    return get<Buffer<Site, T>>().value;
  }

  /// Frees every part.
  void clear() noexcept;

 private:
  template <class Site, class T>
  struct Buffer {
    T value;
  };
  struct Slot {
    void* object = nullptr;
    void (*destroy)(void*) = nullptr;
  };
  /// A slot number for each type that asks (process-wide, from 0).
  static size_t next_slot() noexcept;
  /// The calling thread's own context (current() without a Scope).
  static EvalContext& own() noexcept;
  /// The context a Scope installed on this thread (null: none): the only thread_local of the
  /// evaluation path besides own()'s; it points at the owner's context and owns nothing.
  static inline thread_local EvalContext* installed_ = nullptr;
  template <class T>
  T& make(size_t slot) {
    if (slot >= slots_.size()) slots_.resize(slot + 1);
    T* object = new T();
    slots_[slot] = {object, [](void* p) { delete static_cast<T*>(p); }};
    return *object;
  }

  std::vector<Slot> slots_;
};

}  // namespace rapid
