// A request longer than the stack's per-iteration token budget with chunked prefill off
// (docs/inference.md "Serving stacks", over_budget_prompt): which tokens each stack checks,
// what the shipped stacks do, and the rows: refused (status infeasible on every layout and
// load) or run alone past the budget (status ok, warning prompt_over_budget, the prompt in
// one iteration).
#include <gtest/gtest.h>

#include <string>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/serving_spec.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

ServingSpec requests(int64_t input, int64_t output, OverBudgetPrompt rule, bool chunked) {
  ServingSpec s;
  s.stack.max_num_batched_tokens = 8192;
  s.stack.chunked_prefill = chunked;
  s.stack.over_budget_prompt = rule;
  test::fixed_lengths(s, input, output);
  return s;
}

TEST(ServingBudget, WhatEachRuleCompares) {
  // Budget 8192. A 20,000-token prompt is over it under every rule; each stack's answer:
  // SGLang runs it alone, TensorRT-LLM refuses the prompt, vLLM refuses to start.
  for (auto rule : {OverBudgetPrompt::Alone, OverBudgetPrompt::RefusePrompt,
                    OverBudgetPrompt::RefuseSequence}) {
    const ServingSpec s = requests(20000, 100, rule, false);
    EXPECT_TRUE(s.over_budget());
    EXPECT_EQ(s.refused_over_budget(), rule != OverBudgetPrompt::Alone);
    // Chunked prefill splits it: nothing is over the budget.
    EXPECT_FALSE(requests(20000, 100, rule, true).over_budget());
  }
  // 7,000 in + 2,000 out: the prompt fits 8192, the sequence (9,000) does not; vLLM compares
  // max_model_len, the sequence, and refuses; TensorRT-LLM compares the prompt and serves.
  EXPECT_TRUE(requests(7000, 2000, OverBudgetPrompt::RefuseSequence, false).refused_over_budget());
  EXPECT_EQ(requests(7000, 2000, OverBudgetPrompt::RefuseSequence, false).budget_checked_tokens(),
            9000);
  EXPECT_FALSE(requests(7000, 2000, OverBudgetPrompt::RefusePrompt, false).over_budget());
  EXPECT_FALSE(requests(7000, 2000, OverBudgetPrompt::Alone, false).over_budget());
}

TEST(ServingBudget, ShippedStacksDoWhatTheirSourcesSay) {
  auto rule = [](const char* name) {
    return load_serving_stack(name, RAPID_SOURCE_DIR, "test", "stack").over_budget_prompt;
  };
  EXPECT_EQ(rule("vllm"), OverBudgetPrompt::RefuseSequence);        // verify_max_model_len
  EXPECT_EQ(rule("tensorrt-llm"), OverBudgetPrompt::RefusePrompt);  // LLM._check_arguments
  EXPECT_EQ(rule("sglang"), OverBudgetPrompt::Alone);               // PrefillAdder
  EXPECT_EQ(rule("nemo-inference-2023"), OverBudgetPrompt::Alone);  // one context step
}

// Llama 2 7B on one A100, one request at a time: 2,048-token prompts against a budget of
// 1,024 with chunked prefill off, on `stack`.
SweepSpec job(const std::string& name, const std::string& stack, bool chunked) {
  const std::string text = "name: " + name +
                           "\nmode: inference\nmodel: llama2-7b\nhardware: a100-sxm4-80gb\n"
                           "network: dgx-a100-superpod\ngpus: 1\nserving:\n  stack: " +
                           stack + "\n  max_num_batched_tokens: 1024\n  chunked_prefill: " +
                           (chunked ? "true" : "false") +
                           "\n  requests: {input_tokens: 2048, output_tokens: 32, count: 16}\n"
                           "  concurrency: [1, 4]\nsearch:\n  tp: [1]\n";
  return load_sweep_spec(test::write_temp(name + ".yaml", text));
}

TEST(ServingBudget, RefusedEverywhereOrRunAlone) {
  // TensorRT-LLM refuses the 2,048-token prompts: every point infeasible, both fidelities.
  for (Fidelity f : {Fidelity::Analytical, Fidelity::Des}) {
    const SweepSpec spec = job("budget-trt", "tensorrt-llm", false);
    const Enumerator e(spec);
    const PointEvaluator eval(spec, f);
    Workload w;
    for (int64_t i = 0; i < e.size(); ++i) {
      EvalResult r;
      eval.evaluate(e.decode(i), w, r);
      EXPECT_EQ(r.status, Status::Infeasible) << i;
    }
  }
  // SGLang runs each prompt alone in one iteration past the budget: the rows run, say so,
  // and at concurrency 1 the simulation's TTFT is the closed form's one-iteration prefill
  // (serving_analytical.cpp: without chunking a prompt is one step).
  const SweepSpec spec = job("budget-sgl", "sglang", false);
  const Point p = Enumerator(spec).decode(0);  // concurrency 1
  Workload w;
  EvalResult des, closed;
  PointEvaluator(spec, Fidelity::Des).evaluate(p, w, des);
  PointEvaluator(spec, Fidelity::Analytical).evaluate(p, w, closed);
  ASSERT_EQ(des.status, Status::Ok);
  ASSERT_EQ(closed.status, Status::Ok);
  EXPECT_TRUE(des.flags & kFlagPromptOverBudget);
  EXPECT_TRUE(closed.flags & kFlagPromptOverBudget);
  EXPECT_NEAR(des.ttft_s, closed.ttft_s, 0.02 * closed.ttft_s);
  // With chunked prefill the same prompts are split: no warning.
  EvalResult chunked;
  PointEvaluator(job("budget-sgl-chunked", "sglang", true), Fidelity::Analytical)
      .evaluate(p, w, chunked);
  EXPECT_FALSE(chunked.flags & kFlagPromptOverBudget);
}

}  // namespace
}  // namespace rapid
