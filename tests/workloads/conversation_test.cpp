#include <cmath>
#include <map>

#include <catch2/catch.hpp>

#include "tests/workloads/test_support.hpp"
#include "workloads/length_sampler.hpp"

using namespace servesim;
using Catch::Matchers::Contains;
using servesim::test::drain;
using servesim::test::error_of;
using servesim::test::make;

namespace {

std::string conversation_yaml(const std::string& extra, int requests = 4000) {
  return "workload:\n  arrival: {kind: static, qps: 1000}\n  lengths: {kind: conversation, "
         "turns_mean: 2.5, prompt_tokens_mean: 600, reply_ratio: 2.8, sigma: 1, "
         "max_prompt_tokens: 16384, output: {edges: [1, 101, 501], counts: [1, 3]}" +
         extra + "}\n  num_requests: " + std::to_string(requests) + "\n";
}

}  // namespace

TEST_CASE("conversation lengths average the stated prompt, and each turn carries the history",
          "[workloads][conversation]") {
  const auto r = drain(*make(conversation_yaml("", 20000)));
  REQUIRE(r.size() == 20000);
  double prompts = 0;
  double outputs = 0;
  std::map<std::int64_t, int> turns;
  for (std::size_t i = 0; i < r.size(); ++i) {
    prompts += r[i].prompt_tokens;
    outputs += r[i].output_tokens;
    // The whole prompt is the conversation's prefix; a later turn holds the earlier prompt.
    CHECK(r[i].prefix_tokens == r[i].prompt_tokens);
    REQUIRE(r[i].prefix_group >= 0);
    if (i > 0 && r[i].prefix_group == r[i - 1].prefix_group) {
      CHECK(r[i].prompt_tokens > r[i - 1].prompt_tokens);
    } else if (i > 0) {
      CHECK(r[i].prefix_group == r[i - 1].prefix_group + 1);  // turns come together
    }
    ++turns[r[i].prefix_group];
    CHECK(r[i].output_tokens >= 1);
    CHECK(r[i].output_tokens <= 500);
  }
  // Lognormal draws: the mean over 20,000 requests within 5% of the stated one.
  CHECK(prompts / 20000 == Approx(600).epsilon(0.05));
  // Turns per conversation: geometric with the stated mean.
  CHECK(20000.0 / static_cast<double>(turns.size()) == Approx(2.5).epsilon(0.05));
  // Outputs: bin [1, 101) with weight 1, [101, 501) with weight 3: mean 0.25·50.5 + 0.75·300.5.
  CHECK(outputs / 20000 == Approx(0.25 * 50.5 + 0.75 * 300.5).epsilon(0.03));
}

TEST_CASE("conversation lengths repeat the request file every unique_requests",
          "[workloads][conversation]") {
  const auto r = drain(*make(conversation_yaml(", unique_requests: 100", 300)));
  REQUIRE(r.size() == 300);
  for (std::size_t i = 0; i < 100; ++i) {
    CHECK(r[i + 100].prompt_tokens == r[i].prompt_tokens);
    CHECK(r[i + 200].output_tokens == r[i].output_tokens);
    CHECK(r[i + 200].prefix_group == r[i].prefix_group);
  }
  // Without repeats the second hundred is new.
  const auto fresh = drain(*make(conversation_yaml("", 200)));
  int same = 0;
  for (std::size_t i = 0; i < 100; ++i)
    same += fresh[i + 100].prompt_tokens == fresh[i].prompt_tokens;
  CHECK(same < 20);
}

TEST_CASE("conversation lengths: the user-message mean solves the stated prompt mean",
          "[workloads][conversation]") {
  ConversationLengths c;
  c.turns_mean = 2.48;
  c.reply_ratio = 269.0 / 94.9;
  c.prompt_tokens_mean = 634;
  // Chatbot Arena's 94.9-token user messages at 2.48 turns make the 634-token mean.
  CHECK(c.user_tokens_mean() == Approx(94.9).epsilon(0.005));
  c.turns_mean = 1;
  CHECK(c.user_tokens_mean() == Approx(634));
}

TEST_CASE("bad conversation lengths name the key and what was expected",
          "[workloads][conversation]") {
  auto with = [](const std::string& lengths) {
    return error_of("workload:\n  arrival: {kind: static, qps: 10}\n  lengths: " + lengths +
                    "\n  num_requests: 3\n");
  };
  CHECK_THAT(with("{kind: conversation, turns_mean: 0.5, prompt_tokens_mean: 10, "
                  "max_prompt_tokens: 100, output: {edges: [1, 2], counts: [1]}}"),
             Contains("test.yaml:3") && Contains("at least 1 turn"));
  CHECK_THAT(with("{kind: conversation, turns_mean: 1, prompt_tokens_mean: 10, "
                  "max_prompt_tokens: 100, output: {edges: [1, 2, 3], counts: [1]}}"),
             Contains("1 counts for 3 edges"));
  CHECK_THAT(with("{kind: conversation, turns_mean: 1, prompt_tokens_mean: 10, "
                  "max_prompt_tokens: 100, output: {edges: [5, 2], counts: [1]}}"),
             Contains("ascending"));
  CHECK_THAT(with("{kind: conversation, turns_mean: 1, prompt_tokens_mean: 10, "
                  "max_prompt_tokens: 100, output: {edges: [1, 2], counts: [0]}}"),
             Contains("every count is 0"));
  CHECK_THAT(with("{kind: conversation, turns_mean: 1, prompt_tokens_mean: 1000, "
                  "max_prompt_tokens: 100, output: {edges: [1, 2], counts: [1]}}"),
             Contains("above max_prompt_tokens"));
  CHECK_THAT(with("{kind: conversation, turns_mean: 1, prompt_tokens_mean: 10, "
                  "max_prompt_tokens: 100, output: {edges: [1, 2], counts: [1]}, typo: 1}"),
             Contains("typo"));
}
