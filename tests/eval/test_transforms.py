"""The question transforms benchmarks/transforms.py measures search with: fixed examples, exact outputs."""

import random

from mnemoclaw.eval.transforms import Lexicon, apply, colloquial, smalltalk
from mnemoclaw.eval.transforms.names import han_variants, latin_variants, respell, stranger
from mnemoclaw.eval.transforms.numbers import chinese, forms, parse_chinese, rewrite, words, year_chinese

PEOPLE = Lexicon(is_name=lambda w: w in {"Nicolas", "Caroline", "Elway"},
                 is_person=lambda w: w in {"Nicolas", "Caroline", "John"} and w != "Elway",
                 han_people=lambda text: tuple(n for n in ("王建国",) if n in text),
                 taken=lambda text: text in {"nicolas", "caroline", "jun", "王建国"})


def test_a_latin_name_is_respelled_as_a_transliteration_no_corpus_writes():
    assert latin_variants("Nicolas") == ["Nikolas", "Nicollas", "Nycolas", "Nicoles", "Niculas", "Necolas"]
    assert respell("Nicolas", PEOPLE.taken) == ("transliteration", "Nicollas")
    assert respell("Muhhamed", PEOPLE.taken) == ("transliteration", "Muhamed")
    assert "Akib" in latin_variants("Aqib") and "Elise" not in latin_variants("Eliza")
    assert respell("Nicolas", PEOPLE.taken) == respell("Nicolas", PEOPLE.taken)  # the same name, the same way


def test_a_name_whose_every_transliteration_is_taken_gets_one_typo():
    taken = {"jun", "john"}.__contains__
    assert latin_variants("Jon") == ["Jun"]
    assert respell("Jon", taken) == ("typo", "Jonn")


def test_a_chinese_name_gets_a_character_of_the_same_sound():
    assert han_variants("张伟") == ["章伟", "张玮", "张炜"]
    assert respell("王建国", PEOPLE.taken) == ("same sound", "王剑国")


def test_respelled_changes_one_name_of_the_question():
    assert apply("respelled", "What is Nicolas's WeChat?", PEOPLE, "a06") == "What is Nicollas's WeChat?"
    assert apply("respelled", "我舅舅王建国住在哪里？", PEOPLE, "a03") == "我舅舅王剑国住在哪里？"
    assert apply("respelled", "What phone do I use?", PEOPLE, "a01") is None


def test_numbers_in_chinese_and_english_words():
    assert [chinese(n) for n in (10, 15, 38, 105, 175, 1500, 66_000_000)] == [
        "十", "十五", "三十八", "一百零五", "一百七十五", "一千五百", "六千六百万"]
    assert [parse_chinese(t) for t in ("三十八", "一百零五", "两万", "二〇一九", "十")] == [38, 105, 20000, 2019, 10]
    assert year_chinese("2019") == "二〇一九"
    assert [words(n) for n in (3, 38, 175)] == ["three", "thirty-eight", "one hundred seventy-five"]


def test_a_measurement_in_its_other_exact_forms():
    assert forms("175cm", zh=True) == ["175厘米", "一米七五", "1.75米", "175公分", "1.75m"]
    assert forms("175cm", zh=False) == ["1.75 m", "175 centimeters", "1.75 meters"]
    assert forms("60公斤", zh=True) == ["120斤", "60千克", "60kg"]  # 斤: exactly half a kilogram
    assert rewrite("我身高175cm", random.Random(2)) == "我身高175厘米"
    assert rewrite("我身高175厘米", random.Random(0)) == "我身高175cm"


def test_units_rewrites_every_number_and_leaves_identifiers():
    assert apply("units", "2019年发生了什么？", Lexicon(), "q1") == "二〇一九年发生了什么？"
    assert apply("units", "第三十三届超级碗", Lexicon(), "q1") == "第33届超级碗"
    assert apply("units", "What happened on 15 January 2025?", Lexicon(), "q1") == "What happened on 15th January '25?"
    assert apply("units", "Over 30% of patients had three relapses.", Lexicon(), "q2") == \
        "Over 30 percent of patients had 3 relapses."
    assert apply("units", "Aspirin inhibits PGE2, IL-4 and 3,4-biphosphate in the 70's.", Lexicon(), "q1") is None
    assert apply("units", "中国由哪两个板块碰撞形成？", Lexicon(), "q1") is None  # 哪两个: which two, not 2


def test_smalltalk_wraps_the_question_in_its_language():
    assert apply("smalltalk", "我舅舅叫什么名字？", Lexicon(), "q1") == "唉，今天好累。话说回来，我舅舅叫什么名字？谢谢啦！"
    assert apply("smalltalk", "What did Caroline research?", PEOPLE, "q1") == \
        "Ugh, Mondays. Anyway, what did Caroline research? Thanks!"
    # a name stays capitalised after an opener
    assert smalltalk("Caroline's dog?", PEOPLE, random.Random(2)) == "Hi there! Lovely weather today. By the way, Caroline's dog?"


def test_colloquial_chinese_says_sha_and_laizhe():
    assert apply("colloquial", "我舅舅叫什么名字？", Lexicon(), "q0") == "我舅舅叫啥名字来着？"
    assert apply("colloquial", "我舅舅叫什么名字？", Lexicon(), "q1") == "我舅舅叫啥名字呢？"
    assert colloquial("我用的手机怎么样？", Lexicon(), random.Random(0)) == "我用的手机咋样呢？"
    assert colloquial("这是真的吗？", Lexicon(), random.Random(0)) == "这是真的，是不是？"


def test_colloquial_english_contracts_and_asks_again():
    assert apply("colloquial", "What did Caroline research?", PEOPLE, "q0") == "What'd Caroline research again?"
    assert apply("colloquial", "What did Caroline research?", PEOPLE, "q3") == "remind me, what'd Caroline research?"
    assert apply("colloquial", "Cold exposure increases BAT recruitment.", Lexicon(), "q1") == \
        "remind me, cold exposure increases BAT recruitment?"


def test_unheld_puts_someone_nobody_in_memory_is_in_the_question():
    assert apply("unheld", "What did Caroline research?", PEOPLE, "q1") == "What did Florian research?"
    assert apply("unheld", "Who was John Elway?", PEOPLE, "q1") == "Who was Caspian Hargreaves?"
    assert apply("unheld", "我舅舅王建国住在哪里？", PEOPLE, "q1") == "我舅舅阚佳琪住在哪里？"
    assert stranger("托马斯·戴维斯", PEOPLE.taken) == "贝塔娜·瓦蒂伦"  # a transliterated name for one
    assert apply("unheld", "What phone do I use?", PEOPLE, "q1") is None
