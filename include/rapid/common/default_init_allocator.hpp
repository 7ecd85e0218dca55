// An allocator whose value-less construct() default-initialises: a std::vector of bytes
// grown by resize() leaves the new bytes as they are instead of zeroing them (the row
// blocks the sweep fills entirely, which were zero-filled at every chunk: 14% of the
// evaluating thread in memset, issue 35). Everything else is the base allocator's.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace rapid {

template <class T, class A = std::allocator<T>>
class DefaultInitAllocator : public A {
  using Traits = std::allocator_traits<A>;

 public:
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
  };

  using A::A;
  DefaultInitAllocator() = default;

  /// Default-initialises (no zeroing for trivial types).
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    Traits::construct(static_cast<A&>(*this), p, std::forward<Args>(args)...);
  }
};

}  // namespace rapid
