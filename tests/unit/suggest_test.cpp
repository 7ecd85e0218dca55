// "Did you mean" (common/suggest.hpp): the distance by hand, the choice of the nearest, and
// the command-line site (apps/cli_suggest.hpp) on a small CLI11 app.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "apps/cli_suggest.hpp"
#include "rapid/common/suggest.hpp"

namespace rapid {
namespace {

TEST(EditDistance, HandComputed) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);  // three deletions
  EXPECT_EQ(edit_distance("", "ab"), 2u);   // two insertions
  EXPECT_EQ(edit_distance("tp", "tp"), 0u);
  EXPECT_EQ(edit_distance("tpp", "tp"), 1u);  // delete one p
  EXPECT_EQ(edit_distance("tpp", "pp"), 1u);  // delete the t
  // kitten -> sitten (k/s) -> sittin (e/i) -> sitting (+g)
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("sitting", "kitten"), 3u);
  EXPECT_EQ(edit_distance("thredas", "threads"), 1u);  // "da" swapped
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);        // -f, +n
  // Optimal string alignment edits no swapped pair again: ca -> ac -> abc would be 2
  // (unrestricted Damerau-Levenshtein), OSA needs 3 (c->a... : delete c, insert b, c).
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
  EXPECT_EQ(edit_distance("llama3-8b", "lama3-8b"), 1u);
}

TEST(Suggest, ThresholdIsAThirdOfTheLength) {
  EXPECT_EQ(suggestion_threshold("a"), 1u);
  EXPECT_EQ(suggestion_threshold("tpp"), 1u);
  EXPECT_EQ(suggestion_threshold("thredas"), 2u);
  EXPECT_EQ(suggestion_threshold("llama3-7b"), 3u);
}

TEST(Suggest, NearestWithTiesToTheLongestCommonPrefix) {
  const std::vector<std::string> search = {"tp", "pp", "cp", "ep", "mbs", "sp", "recompute"};
  // tp and pp are both 1 away; tp shares "tp" with the word, pp nothing.
  EXPECT_EQ(suggest("tpp", search), std::vector<std::string>{"tp"});
  EXPECT_EQ(suggest("thredas", {"threads", "chunk", "quiet"}), std::vector<std::string>{"threads"});
  // Two at distance 1 with the same prefix: both, by name.
  EXPECT_EQ(suggest("xp", {"tp", "pp", "mbs"}), (std::vector<std::string>{"pp", "tp"}));
  EXPECT_TRUE(suggest("tp", search).empty());      // a candidate itself
  EXPECT_TRUE(suggest("zzzzzz", search).empty());  // nothing near
  EXPECT_TRUE(suggest("a", {"b"}).empty());        // all of it replaced
  EXPECT_EQ(suggest("recomput", search), std::vector<std::string>{"recompute"});
}

TEST(Suggest, WordThatBeginsCandidates) {
  // "h100" is 10 away from each: the names it begins, by name, at most 3.
  const std::vector<std::string> gpus = {"h100-sxm5-80gb", "h100-pcie-80gb", "a100-sxm4-80gb",
                                         "h100-nvl-94gb", "h100-a-stacked-l2"};
  EXPECT_EQ(suggest("h100", gpus),
            (std::vector<std::string>{"h100-a-stacked-l2", "h100-nvl-94gb", "h100-pcie-80gb"}));
  EXPECT_EQ(suggest("h100", gpus, 2),
            (std::vector<std::string>{"h100-a-stacked-l2", "h100-nvl-94gb"}));
}

TEST(Suggest, Messages) {
  EXPECT_EQ(did_you_mean({}), "");
  EXPECT_EQ(did_you_mean({"tp"}, "search."), "did you mean search.tp?");
  EXPECT_EQ(did_you_mean({"a", "b"}), "did you mean a or b?");
  EXPECT_EQ(did_you_mean({"a", "b", "c"}, "--"), "did you mean --a, --b or --c?");
  EXPECT_EQ(list_names({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(list_names({"a", "b", "c"}, 2), "a, b and 1 more");
  EXPECT_EQ(list_names({}), "");
}

/// A small app like rapid's: --quiet on top, `predict` with --fidelity and --tp.
struct SmallApp {
  CLI::App app{"test"};
  CLI::App* predict = nullptr;
  bool quiet = false;
  std::string fidelity, job;
  int tp = 1;
  SmallApp() {
    app.add_flag("--quiet", quiet, "");
    predict = app.add_subcommand("predict", "");
    predict->add_option("job", job, "");
    predict->add_option("--fidelity", fidelity, "");
    predict->add_option("--tp", tp, "");
    app.add_subcommand("validate", "");
  }
  /// The hint for `line`, which must fail with an ExtrasError.
  std::string hint(const std::string& line) {
    try {
      app.parse(line, false);
    } catch (const CLI::ParseError& e) {
      EXPECT_NE(dynamic_cast<const CLI::ExtrasError*>(&e), nullptr) << line << ": " << e.what();
      return parse_error_hint(app, e);
    }
    ADD_FAILURE() << "parsed: " << line;
    return "";
  }
};

TEST(FlagSuggestions, UnknownFlagOfTheSubcommandReached) {
  EXPECT_EQ(SmallApp().hint("predict job.yaml --fidelty des"), "did you mean --fidelity?");
  EXPECT_EQ(SmallApp().hint("predict job.yaml --fidelty=des"), "did you mean --fidelity?");
  // One dash short of a flag that exists.
  EXPECT_EQ(SmallApp().hint("predict job.yaml -fidelity des"), "did you mean --fidelity?");
  // The top level's flags apply under a subcommand too.
  EXPECT_EQ(SmallApp().hint("predict job.yaml --quite"), "did you mean --quiet?");
  // A misspelt subcommand.
  EXPECT_EQ(SmallApp().hint("prdict job.yaml"), "did you mean predict?");
  // Nothing near: no hint (CLI11's message alone).
  EXPECT_EQ(SmallApp().hint("predict job.yaml --zzzzzz"), "");
}

TEST(FlagSuggestions, SubcommandNamesAndReachedCommand) {
  SmallApp s;
  EXPECT_EQ(subcommand_names(s.app), (std::vector<std::string>{"predict", "validate"}));
  s.app.parse("predict job.yaml --tp 2", false);
  EXPECT_EQ(&reached_command(s.app), s.predict);
  std::vector<std::string> flags = long_option_names(*s.predict);
  std::sort(flags.begin(), flags.end());
  EXPECT_EQ(flags, (std::vector<std::string>{"fidelity", "help", "help", "quiet", "tp"}));
  EXPECT_EQ(flag_suggestions(*s.predict, {"--thredas", "4", "--tpp"}), "did you mean --tp?");
}

}  // namespace
}  // namespace rapid
