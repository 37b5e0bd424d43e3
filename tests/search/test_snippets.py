"""A snippet's lines cut to the part that matched, who said them kept; and snippet recall
counted by what the snippet's text shows."""

import unicodedata
from types import SimpleNamespace

import pytest

from mnemoclaw.eval import runner
from mnemoclaw.eval.runner import holds, snippets_show
from mnemoclaw.search.snippets import Snippet, choose, speaker
from mnemoclaw.text.tokenize import keyword_query


def terms(query: str) -> dict[str, float]:
    return dict.fromkeys(keyword_query(query).terms, 1.0)


def shown_line(text: str, start: str) -> str:
    return next(line for line in text.split("\n") if line.startswith(start))


def dialogue(line: str, at: int = 5) -> str:
    """A chunk long enough to be cut, ``line`` its ``at``-th line among turns about nothing."""
    lines = [f"- **Melanie** (D3:{i}): " + "the weather was mild and the garden is growing well " * 4 for i in range(12)]
    lines[at] = line
    return "\n".join(lines)


@pytest.mark.parametrize("line,prefix", [
    ("- **Caroline** (D3:5): hi", "- **Caroline** (D3:5): "),
    ("- **User**: hi", "- **User**: "),  # a session saved to memory
    ("User: hi", "User: "),  # a transcript
    ("**Assistant:** hi", "**Assistant:** "),
    ("- (D1:3) Alice adopted a cat", "- (D1:3) "),
    ("小明：我们去了湖边", "小明："),
    ("- **小明** (D1:2): 我们", "- **小明** (D1:2): "),
    ("- a line about nothing in particular", ""),
    ("see https://example.com for more", ""),
    ("10:42 the train left", ""),
    ("a whole sentence of many words: then more", ""),
])
def test_who_speaks_a_line(line, prefix):
    assert speaker(line) == prefix


def test_a_cut_line_keeps_who_said_it():
    """The best window of a dialogue turn can start inside its ``- **Name** (D3:5):``; the
    speaker and the dialogue id stay in front of what is shown, within the line's length."""
    line = ("- **Caroline** (D3:5): We saw a grey heron catching fish there, and then we all walked slowly "
            "along the lake shore for hours talking about painting and music and other things.")
    for at in (0, 5):  # the best line (220 characters at most) and, below, one of 100
        snip = choose(dialogue(line, at), 1, terms("heron lake"), 700)
        shown = shown_line(snip.text, "- **Caroline** (D3:5): ")
        assert "heron" in shown and len(shown) <= 220
    snip = choose(dialogue(line), 1, {**terms("heron lake"), **terms("garden")}, 700, line_max=100, best_line_max=100)
    shown = shown_line(snip.text, "- **Caroline** (D3:5): ")
    assert len(shown) <= 100 and "heron" in shown, shown


def test_a_cut_line_shows_its_speaker_an_ellipsis_and_the_match():
    line = "- **Caroline** (D3:5): " + "we talked about nothing much at all that day " * 4 + "and then a heron landed."
    snip = choose(dialogue(line), 1, terms("heron"), 700, line_max=100, best_line_max=100)
    shown = shown_line(snip.text, "- **Caroline**")
    assert shown.startswith("- **Caroline** (D3:5): …") and shown.endswith("heron landed.") and len(shown) <= 100


def test_a_cut_chinese_line_keeps_who_said_it_and_whole_characters():
    line = ("- **小明** (D1:2): 我们昨天在公园里散步，聊了很多工作上的事情，也聊了孩子们的学校和老师，"
            "后来天气变了，我们就去了咖啡馆坐了一会儿，然后沿着湖边慢慢地走，看到一只灰色的苍鹭在抓鱼，"
            "真是太神奇了，我们一直看到太阳下山才回家。")
    snip = choose(dialogue(line), 1, terms("苍鹭"), 700, line_max=60, best_line_max=60)
    shown = shown_line(snip.text, "- **小明** (D1:2): ")
    assert shown.startswith("- **小明** (D1:2): …") and "苍鹭" in shown and len(shown) <= 60
    assert shown[len("- **小明** (D1:2): …"):].rstrip("…") in line  # a piece of the line, as written
    plain = "小明：" + line[len("- **小明** (D1:2): "):]
    shown = shown_line(choose(dialogue(plain), 1, terms("苍鹭"), 700, line_max=60, best_line_max=60).text, "小明：")
    assert shown.startswith("小明：…") and "苍鹭" in shown and len(shown) <= 60


def test_a_cut_never_parts_a_letter_from_its_accent():
    line = "- **Zoë** (D2:1): " + "cafe\u0301 " * 40 + "the heron " + "cafe\u0301 " * 40
    shown = shown_line(choose(dialogue(line), 1, terms("heron"), 700, line_max=60, best_line_max=60).text, "- **Zoë**")
    for i, ch in enumerate(shown):
        if unicodedata.combining(ch):
            assert shown[i - 1] == "e", shown


def test_a_line_without_a_speaker_is_cut_as_before():
    words = [f"w{i:03d}" for i in range(100)]
    words[50] = "heron"
    line = "We walked " + " ".join(words)
    shown = shown_line(choose(dialogue(line), 1, terms("heron"), 700, line_max=100, best_line_max=100).text, "…")
    assert shown == "…w046 w047 w048 w049 heron w051 w052 w053 w054 w055 w056 w057 w058 w059 w060 w061 w062 w063 w0…"


LINE = "- **Caroline** (D3:5): We saw a grey heron catching fish there, and then we all walked along the lake."


@pytest.mark.parametrize("snippet,held", [
    (LINE, True),
    ("- **Melanie** (D3:4): How was it?\n" + LINE[:70] + "…", True),
    ("- **Caroline** (D3:5): …grey heron catching fish there, and then we…", True),
    ("…(D3:5): We saw a grey heron catching fish there, and then we all…", False),  # cut past who said it
    ("…We saw a grey heron catching fish there, and then we all walked…", False),
    ("- **Caroline** (D3:5): We saw a…", False),  # a few words
    ("- **Caroline** (D3:5): We saw a grey otter catching fish there, and then we all…", False),  # not this line
    ("- **Caroline** (D3:6): …grey heron catching fish there, and then we…", False),
])
def test_a_line_is_shown_when_the_snippet_text_holds_it(snippet, held):
    assert holds(snippet, LINE, "(D3:5)") is held


def test_snippet_recall_counts_what_the_text_shows_not_what_the_lines_name(monkeypatch):
    text = "- **Melanie** (D3:4): How was the walk?\n" + LINE
    hit = SimpleNamespace(path="s.md", text=text, start_line=10, terms=terms("heron"), analysed=None)
    evidence = {"D3:5": ("s.md", 11)}
    shown = snippets_show([hit], evidence)
    assert (shown.text, shown.lines) == (1.0, 1.0)
    cut = Snippet("…(D3:5): We saw a grey heron catching fish there, and then we all…", ((11, 11),))
    monkeypatch.setattr(runner, "choose_all", lambda *a, **k: [cut])
    shown = snippets_show([hit], evidence)
    assert (shown.text, shown.lines) == (0.0, 1.0)
