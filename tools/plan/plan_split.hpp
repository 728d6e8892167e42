#pragma once

#include "tools/plan/plan.hpp"

namespace servesim::decide {

// `plan --split T1,T2,…`: the cheapest fleet that meets the SLOs as one pool (the ordinary plan,
// written to the output folder as always) against two length-split pools: for each threshold T,
// a short pool planned for the requests with prompts ≤ T alone and a long pool for the rest
// (workload.prompt_tokens), each the plan of its own stream. A pool that meets a latency
// percentile, a mean or an attainment bound on its stream makes the fleet meet it on the whole
// workload (a mixture's p-th percentile is at most the larger of its parts'; its mean and
// attainment lie between theirs), so the split fleet is the sum of the two pool picks; bounds
// on totals (throughput, counts) do not compose and are refused. The cheapest split is then
// simulated whole, behind a length_split router, to check it. Writes split.json beside plan.json
// and each pool's plan under split_T/{short,long}/.
PlanReport run_split_plan(const PlanOptions& options);

}  // namespace servesim::decide
