// Steady-state closed form of continuous batching on one replica (docs/inference.md sec 4).
// Closed loop with c requests in flight (or open loop at rate lambda, c from Little's law
// c = lambda x E2E, solved by fixed-point iteration), fixed lengths I and O (the mix's means):
//   c_run = min(c, max_batch)                        requests running; the rest wait
//   P     = ceil(I / (max_num_batched_tokens - c_run)) prefill iterations of one prompt
//   N     = P + O - 1                                iterations a request spends running
//   phi   = (c_run - 1) P / N                        other prompts' chunks a request meets
//                                                    per iteration (mean)
// Its decode gaps carry floor(phi) or floor(phi) + 1 chunks of I/P tokens in proportion
// beside the running decodes at the mean context I + O/2 (one request at position j of its
// output for the ITL at the start, middle and end); its own prefill iterations carry its
// chunk with the same others. tau = the mean gap, tau_p = the mean own-prefill iteration
// (StepModel times each). ITL = tau, TTFT = wait + P tau_p, E2E = TTFT + (O - 1) tau,
// requests/s = c_run / (P tau_p + (O - 1) tau) (Little's law; with pipeline parallelism pp
// groups of c_run / pp in flight, each iteration taking max(latency through the stages,
// pp x the slowest stage)), wait = (c - c_run) / requests/s closed loop, tau / 2 open loop.
// Without mixed batches prompts run alone first: tau_d + (c - 1) / (O - 1) prompts'
// prefill between two of a decoder's tokens.
#pragma once

#include "rapid/inference/replica_metrics.hpp"
#include "rapid/inference/serving_memory.hpp"
#include "rapid/inference/step_model.hpp"

namespace rapid {

/// `load`: requests in flight (closed loop) or per second (open loop) offered to this replica.
ReplicaMetrics serving_closed_form(const StepModel& step, const ServingSpec& serving,
                                   const ServingMemory& memory, int64_t pp, double load);

}  // namespace rapid
