"""The question inside a message (text/smalltalk.py): small talk around it taken off, never into it."""

import pytest

from mnemoclaw.text.smalltalk import question_of


@pytest.mark.parametrize("message, question", [
    ("Hi! Lovely weather today. By the way, where did Jon go last summer?", "where did Jon go last summer?"),
    ("Hey there, how are you? Quick question: when did Gina open her store?", "when did Gina open her store?"),
    ("So, what did Melanie paint?", "what did Melanie paint?"),
    ("I was wondering what Jon bought in Paris", "what Jon bought in Paris"),
    ("哎呀，今天天气真好。我本来想说的是，张伟的职业是什么？", "张伟的职业是什么？"),
    ("嗨，在吗？我想问一下，我用的手机是啥牌子？", "我用的手机是啥牌子？"),
    ("对了，我舅舅叫什么名字来着？", "我舅舅叫什么名字来着？"),
    # a closing wish or an interjection after or before it
    ("How does inequality prevent growth? Hope you're having a good one!", "How does inequality prevent growth?"),
    ("Ugh. Where did Jon go last summer? Have a great weekend, no rush", "Where did Jon go last summer?"),
])
def test_small_talk_around_a_question_is_taken_off(message, question):
    assert question_of(message) == question


@pytest.mark.parametrize("message", [
    "What did Caroline, my friend, say about adoption?",  # commas inside a question keep it whole
    "How tall is he, 1.75 m?",
    "Thanks for the book tip, which book was it?",  # thanks for something is what it is about
    "best python web framework",
    "hello", "你好", "今天天气真好",  # nothing but small talk: searched as written
    "Nice weather for the wedding in Lisbon?",
    "Have a nice day in Paris?", "Take care of the cat while I am away?",  # what it asks about
])
def test_a_question_without_small_talk_or_with_nothing_else_is_left_as_written(message):
    assert question_of(message) == message
