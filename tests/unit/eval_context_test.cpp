// The per-thread evaluation context (common/eval_context.hpp): one part per type, a Scope
// installs a context and puts the previous one back, clear() destroys every part, and a
// thread no scheduler runs has a context of its own.
#include "rapid/common/eval_context.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace rapid {
namespace {

struct Counted {
  static inline int alive = 0;
  int value = 0;
  Counted() { ++alive; }
  ~Counted() { --alive; }
};
struct Other {
  std::vector<int> buffer;
};

TEST(EvalContext, EachTypeHasOnePartPerContext) {
  const int before = Counted::alive;
  EvalContext a, b;
  a.get<Counted>().value = 7;
  // The same part on the next call; another context has its own, value-initialised.
  EXPECT_EQ(&a.get<Counted>(), &a.get<Counted>());
  EXPECT_EQ(a.get<Counted>().value, 7);
  EXPECT_EQ(b.get<Counted>().value, 0);
  EXPECT_NE(&a.get<Counted>(), &b.get<Counted>());
  // Another type is another part.
  a.get<Other>().buffer.push_back(1);
  EXPECT_TRUE(b.get<Other>().buffer.empty());
  EXPECT_EQ(Counted::alive, before + 2);
  a.clear();  // a's Counted goes, b's stays; a makes a fresh one on the next use
  EXPECT_EQ(Counted::alive, before + 1);
  EXPECT_EQ(a.get<Counted>().value, 0);
  EXPECT_EQ(Counted::alive, before + 2);
}

TEST(EvalContext, TwoCallSitesHaveTwoBuffersOfOneType) {
  EvalContext c;
  struct SiteA;
  struct SiteB;
  c.buffer<SiteA, std::vector<int>>().push_back(1);
  EXPECT_EQ((c.buffer<SiteA, std::vector<int>>().size()), 1u);  // the same buffer again
  EXPECT_TRUE((c.buffer<SiteB, std::vector<int>>().empty()));   // another site's
}

TEST(EvalContext, AScopeInstallsItsContextAndPutsThePreviousBack) {
  EvalContext& own = EvalContext::current();  // this thread's own: no scope installed
  EvalContext outer, inner;
  {
    const EvalContext::Scope s1(outer);
    EXPECT_EQ(&EvalContext::current(), &outer);
    {
      const EvalContext::Scope s2(inner);
      EXPECT_EQ(&EvalContext::current(), &inner);
    }
    EXPECT_EQ(&EvalContext::current(), &outer);
  }
  EXPECT_EQ(&EvalContext::current(), &own);
}

TEST(EvalContext, AThreadWithoutAScopeHasItsOwn) {
  const EvalContext* main_own = &EvalContext::current();
  const EvalContext* other = nullptr;
  std::thread t([&] { other = &EvalContext::current(); });
  t.join();
  EXPECT_NE(other, main_own);
}

TEST(EvalContext, DestroyingAContextDestroysItsParts) {
  const int before = Counted::alive;
  {
    EvalContext c;
    c.get<Counted>();
    EXPECT_EQ(Counted::alive, before + 1);
    EvalContext moved(std::move(c));  // the parts move with it: destroyed once
    EXPECT_EQ(Counted::alive, before + 1);
  }
  EXPECT_EQ(Counted::alive, before);
}

}  // namespace
}  // namespace rapid
