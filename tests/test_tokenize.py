from mnemoclaw.text.tokenize import analyze, estimate_tokens, fts_document, keyword_query, similarity_tokens


def test_english_is_stemmed_lowercased_and_folded():
    assert analyze("Running CAFÉS") == ["run", "cafe"]


def test_cjk_runs_become_unigrams_and_bigrams():
    assert analyze("乌龙茶") == ["乌", "龙", "茶", "乌龙", "龙茶"]
    assert analyze("茶") == ["茶"]


def test_mixed_scripts_split_at_the_boundary():
    assert analyze("NFL黑豹") == ["nfl", "黑", "豹", "黑豹"]


def test_fts_document_is_space_separated_terms():
    assert fts_document("PR-4821 黑豹") == "pr 4821 黑 豹 黑豹"


def test_query_drops_stop_words_but_keeps_them_if_nothing_else():
    assert keyword_query("what is the database").terms == ("databas",)
    assert keyword_query("what is it").terms  # never empty for a real query


def test_query_of_fts_syntax_is_plain_words():
    q = keyword_query('"AND" OR NEAR(foo* bar) ^title:x')
    assert "near" in q.terms and "foo" in q.terms and "titl" in q.terms
    assert all(t.isalnum() for t in q.terms)


def test_query_of_only_punctuation_is_empty_not_an_error():
    assert keyword_query("?!*()\"'").empty
    assert keyword_query("").empty


def test_identifiers_become_phrases():
    q = keyword_query("INC-20931 memory_search")
    assert ("inc", "20931") in q.phrases
    assert ("memori", "search") in q.phrases


def test_chinese_question_words_are_not_search_terms():
    q = keyword_query("黑豹队的防守丢了多少分？")
    assert "多" not in q.terms and "多少" not in q.terms
    assert "黑豹" in q.terms and "防守" in q.terms


def test_one_and_two_character_chinese_queries_have_terms():
    assert keyword_query("茶").terms == ("茶",)
    assert keyword_query("防守").terms == ("防", "守", "防守")


def test_estimate_tokens_counts_cjk_per_character():
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("数据库") == 3
    assert estimate_tokens("ab数据") == 3


def test_similarity_tokens_include_cjk_pairs():
    assert similarity_tokens("Hello 数据库") == {"hello", "数据", "据库"}
