from mnemoclaw.text.tokenize import (
    analyze,
    estimate_tokens,
    fts_document,
    irregular_in,
    keyword_query,
    similarity_tokens,
)


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


def test_traditional_and_simplified_chinese_are_the_same_terms():
    from mnemoclaw.text.tokenize import analyze

    # characters, and Taiwan's words for things (資料庫 is 数据库, 軟體 is 软件, 記憶體 is 内存)
    for hant, hans in (("資料庫遷移", "数据库迁移"), ("圖書館", "图书馆"), ("軟體更新", "软件更新"), ("記憶體不足", "内存不足")):
        assert analyze(hant) == analyze(hans), (hant, hans)
        assert set(keyword_query(hant).terms) == set(keyword_query(hans).terms) <= set(analyze(hans))
    assert analyze("Café PR-4821") == analyze("café pr-4821")  # no Chinese: untouched
    # a Traditional question's question words go as the Simplified ones do
    assert keyword_query("資料庫什麼時候遷移").terms == keyword_query("数据库什么时候迁移").terms


def test_the_highlighter_gets_the_query_words_as_the_other_script_writes_them():
    from mnemoclaw.text.script import marks

    text = "我們討論了資料庫遷移方案，決定下週五切換到新伺服器。圖書館在三樓。"
    assert marks(text, ["数据库", "图书馆"]) == ["資料庫", "圖書館"]
    assert marks("我们讨论了数据库迁移", ["資料庫"]) == ["数据库"]
    assert marks(text, ["資料庫"]) == []  # same script: the highlighter finds it as typed
    assert marks("no Chinese here", ["数据库"]) == [] and marks(text, ["database"]) == []


def test_a_query_s_names_are_its_capitalised_words_past_the_first_and_its_identifiers():
    from mnemoclaw.text.tokenize import keyword_query

    assert keyword_query("When did Caroline meet Dr. Seuss in IT?").names == ("carolin", "dr", "seuss")
    assert keyword_query("Caroline went where").names == ()  # the first word of any sentence is capitalised
    assert keyword_query("status of PR-4821 and v2").names == ("pr", "v2")
    assert keyword_query("数据库什么时候迁移").names == ()


def test_a_query_s_subjects_are_the_names_after_its_verb_or_written_with_s():
    """Whom the question is about: memory that never mentions them has nothing on it, whatever
    other names it shares with the question."""
    assert keyword_query("When did Caroline meet Dr. Seuss in IT?").subjects == (("carolin",),)
    assert keyword_query("What does Imogen think of The Witcher 3?").subjects == (("imogen",),)
    assert keyword_query("What are the names of Griselda's dogs?").subjects == (("griselda",),)
    # a name written in words: memory that holds any of them mentions the person
    assert keyword_query("What does Graham Twigg propose?").subjects == (("graham", "twigg"),)
    assert keyword_query("Is Oscar Fenwick’s pet?").subjects == (("oscar", "fenwick"),)
    # a name in a place, beside a companion or after another name is not whom it is about
    assert keyword_query("What did Caroline do in Paris with Marcus and Mel?").subjects == (("carolin",),)
    assert keyword_query("Why do Fenwick and Imogen find LeBron inspiring?").subjects == (("fenwick",),)
    assert keyword_query("what is the deploy key for PR-4821").subjects == ()
    # a verb late in the question is no question's verb: what follows it is said of something
    assert keyword_query("In what year did Harvard end early admission?").subjects == (("harvard",),)
    assert keyword_query("What entity said that corporal punishment was Constitutional?").subjects == ()
    # only after the question's first verb, and never a title in quotes
    assert keyword_query("Would Caroline likely have Dr. Seuss books?").subjects == (("carolin",),)
    assert keyword_query("For how long has Jolene had Lucifer as a pet?").subjects == (("jolen",),)
    assert keyword_query('What memory does "Fifty Shades of Grey" bring to Tim?').subjects == ()


def test_a_chinese_question_s_names_are_its_people_places_and_organisations():
    from mnemoclaw.text.names import han_names
    from mnemoclaw.text.tokenize import keyword_query

    assert han_names("张伟上周去滨江出差了吗") == ("张伟", "滨江")
    assert han_names("张伟上周去杭州出差了吗") == ("张伟",)  # a city the dictionary sees often: no rare term
    assert han_names("李老师推荐了哪本书") == ("李老师",) and han_names("小王推荐的咖啡馆在哪") == ("小王",)
    assert han_names("周末聚餐定在哪家餐厅") == () and han_names("高兴的事情有哪些") == ()
    assert han_names("转子安装在什么东西上") == ()  # a common word, though tagged as a place
    assert han_names("東京タワーに行った") == ()  # Japanese: the tagger knows Mandarin only
    assert han_names("佢哋琴日去咗杭州") == ()  # nor written Cantonese, whose particles it takes for names
    query = keyword_query("李老師推薦了哪本書")  # Traditional, folded first
    assert query.names == ("李老师",) and query.parts == (("李老", "老师"),)
    assert set(query.parts[0]) <= set(query.terms)
    assert keyword_query("张伟喜欢吃什么").names == ("张伟",) and keyword_query("张伟喜欢吃什么").parts == ((),)


def test_a_name_of_letters_and_digits_is_also_looked_for_written_apart():
    from mnemoclaw.text.tokenize import keyword_query, name_parts

    assert name_parts("mir7a") == ("mir", "7a") and name_parts("400mg") == ("400", "mg")
    assert name_parts("gpt4o") == ("gpt", "4o") and name_parts("carolin") == () and name_parts("4821") == ()
    query = keyword_query("Does miR7a of vitamin E help Caroline?")
    assert query.names == ("mir7a", "carolin") and query.parts == (("mir", "7a"), ())
    assert {"mir", "7a"} <= set(query.counted) and set(query.terms) < set(query.counted)


def test_a_measurement_names_no_one_and_is_matched_in_its_other_forms():
    from mnemoclaw.text.tokenize import keyword_query, measurements

    # a number with a unit is what a question measures: memory that lacks it is not about someone else
    assert keyword_query("Does 400mg of vitamin E help Caroline?").names == ("carolin",)
    assert keyword_query("Who came 2nd in the race?").names == ()
    assert keyword_query("有几个人身高高于175cm？").names == ()
    # every form of one length or weight as the terms a note may hold
    for text in ("175cm", "175 cm", "175厘米", "175公分", "1.75 m", "1.75米", "一米七五"):
        assert measurements(text) == (("175cm", "175"),), text
    assert measurements("一米七") == (("170cm", "170"),)
    assert measurements("她体重120斤") == (("60kg", "60", "120"),)
    assert measurements("60 kg") == (("60kg", "60"),)
    assert measurements("no numbers here") == ()
    assert {"175cm", "175"} <= set(keyword_query("身高175厘米的人是谁").terms)


def test_a_latin_word_in_a_chinese_question_names_someone_only_written_as_a_name():
    from mnemoclaw.text.tokenize import keyword_query

    assert keyword_query("那个新APP挺有意思的，我使用的手机怎么样？").names == ()
    assert keyword_query("我的iPhone是哪年买的").names == ()
    assert "alic" in keyword_query("我昨天和Alice聊了什么").names


def test_spoken_chinese_question_words_are_question_words():
    from mnemoclaw.text.tokenize import keyword_query

    terms = keyword_query("我用的手机是啥牌子来着？").terms
    assert "牌子" in terms and "手机" in terms
    assert not {"啥", "来着", "是啥", "子来"} & set(terms)


def test_keyword_evidence_says_what_memory_never_mentions():
    from mnemoclaw.search.keyword import KeywordEvidence

    words = KeywordEvidence({"carolin": 3.0, "paint": 1.0, "sai": 1.0}, {1: [["paint", "sai"]]}, complete=True,
                            unseen=frozenset({"carolin"}), names=("carolin",), absent=frozenset({"carolin"}))
    present = words.present(1, "")
    assert words.coverage(1, "", present) == 2 / 5
    assert words.content_coverage(1, "", present) == 1 / 4  # "said" only frames the question
    assert words.unseen_share == 3 / 5 and words.names_unseen == 1.0 and words.names_missing(present) == 1.0
    assert words.present(2, "not a candidate") == set()  # every chunk holding a query word was one


def test_a_chinese_name_is_mentioned_where_half_its_character_pairs_are():
    from mnemoclaw.search.keyword import KeywordEvidence, mentioned

    pairs = ("美国", "国宇", "宇航", "航局")  # 美国宇航局, which a note may write 美国宇航管理局
    assert mentioned("美国宇航局", pairs, {"美国", "宇航", "航管"}.__contains__)
    assert not mentioned("美国宇航局", pairs, {"美国", "航天"}.__contains__)
    assert not mentioned("mir7a", ("mir", "7a"), {"mir"}.__contains__)  # letters and digits: both parts
    words = KeywordEvidence({"王建": 2.0, "建国": 1.0}, {1: [["王建", "建国"]], 2: [["国庆"]]}, complete=True,
                            names=("王建国",), parts={"王建国": ("王建", "建国")})
    assert words.names_missing(words.present(1, "")) == 0.0 and words.names_missing(words.present(2, "")) == 1.0
    # a Chinese name may be spelt in Latin letters in an English note, a Latin one in Chinese
    assert words.other_script("Met Li Laoshi at the library") and not words.other_script("和李老师讨论了论文")
    latin = KeywordEvidence({"carolin": 1.0}, names=("carolin",))
    assert latin.other_script("和卡罗琳讨论了论文") and not latin.other_script("Met Caroline")


def test_a_query_keeps_its_latin_names_as_written_each_and_in_runs():
    q = keyword_query("Who beat the Denver Broncos, and did Caroline watch?")
    assert q.written == ("Denver", "Broncos", "Denver Broncos", "Caroline")
    assert keyword_query("数据库迁移").written == ()
    assert keyword_query("When did Jon go to Barcelona").written == ("Jon", "Barcelona")


def test_a_chinese_note_s_nouns_are_its_runs_of_nouns_and_their_words():
    from mnemoclaw.text.names import han_nouns

    got = han_nouns("卡罗来纳黑豹队的防守很强，托马斯·戴维斯迫使对方掉球。")
    assert {"卡罗来纳黑豹队", "黑豹", "托马斯·戴维斯", "托马斯", "戴维斯"} <= set(got)
    assert all(len(w) >= 2 for w in got) and "的" not in "".join(got)
    assert han_nouns("no Chinese here") == ()
    assert han_nouns("佢哋琴日去咗杭州") is None  # written Cantonese: the tagger cannot tell


def test_a_latin_name_is_written_in_a_chinese_note_where_one_of_its_nouns_means_the_same():
    import numpy as np

    from mnemoclaw.search.keyword import TRANSLATED, KeywordEvidence

    words = KeywordEvidence(written=("Panthers",))
    note = "卡罗来纳黑豹队的防守很强"

    def embed(near):
        return lambda texts: np.array([[1.0, 0.0] if t == "Panthers" else
                                       [near, (1 - near * near) ** 0.5] for t in texts])

    assert words.spelt_in(note, embed(TRANSLATED + 0.01))
    assert not words.spelt_in(note, embed(TRANSLATED - 0.01))
    assert words.spelt_in(note, lambda texts: None)  # the embedder cannot tell: the note may
    assert not words.spelt_in("no Chinese here", embed(1.0))  # no noun to write it with
    assert words.spelt_in("佢哋琴日去咗黑豹度", embed(0.0))  # a note the tagger cannot read may
    assert not KeywordEvidence().spelt_in(note, embed(1.0))  # no Latin name to write


def test_an_irregular_past_tense_is_its_verb_and_won_t_is_not_win():
    assert analyze("She won, went home and bought bread") == ["she", "win", "go", "home", "and", "bui", "bread"]
    assert keyword_query("How many tournaments has Nate won?").terms == ("mani", "tournament", "nate", "win")
    assert "win" not in analyze("I won't go. He won’t either. WON'T!")
    assert keyword_query("Why won't she eat meat?").terms == ("eat", "meat")
    assert analyze("children's feet") == analyze("child's foot")
    assert analyze("LED strip, SAW filter") == ["led", "strip", "saw", "filter"]  # acronyms, not led and saw


def test_a_highlighter_is_given_the_irregular_forms_of_the_query_s_words_as_the_note_writes_them():
    assert irregular_in("Maya Won the cup; we went home, a wonder", ["did", "Maya", "win", "go"]) == ["Won", "went"]
    assert irregular_in("Maya won the cup", ["won"]) == []  # as typed, the highlighter finds it itself
    assert irregular_in("数据库迁移", ["数据库"]) == []


def test_a_name_after_a_preposition_is_not_whom_the_question_is_about():
    from mnemoclaw.text.tokenize import keyword_query

    assert keyword_query("Did I ever go to Paris?").names == ()
    assert keyword_query("What did Caroline say about her trip with Marcus?").names == ("carolin",)
    assert keyword_query("Which NFL team played at Super Bowl 50?").names == ("nfl",)
    # still a term, and still a name another script may write (Paris as 巴黎)
    query = keyword_query("Who went with Dana to Lagos?")
    assert {"dana", "lago"} <= set(query.terms) and {"Dana", "Lagos"} <= set(query.written)
    assert keyword_query("status of PR-4821").names == ("pr",)  # an identifier is the subject wherever it stands
    # a date's word, however spelt, stands after a preposition of time, and again where the
    # question writes it a second time
    assert keyword_query("How many words did I write until Apryl 9?").names == ()
    assert keyword_query("Which films did I pick for Apryl 6-7 and Apryl 8?").names == ()
    assert keyword_query("What did Caroline do since Melanie left?").names == ("carolin",)


def test_a_number_is_matched_in_its_other_forms():
    from mnemoclaw.text.tokenize import number_forms

    assert number_forms("How many kids does Melanie have, three?") == (("3", "three"),)
    assert number_forms("She has 3 kids") == (("3", "three"),)
    # Chinese numerals stay Chinese: read as digits they matched every English paragraph's numbers
    assert number_forms("他今年二十三岁") == () and number_forms("我有三个孩子") == ()
    assert number_forms("in 2019") == () and number_forms("no numbers") == ()
