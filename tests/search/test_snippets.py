"""Who says a line, and snippet recall counted by what the snippet's text shows."""

from types import SimpleNamespace

import pytest

from mnemoclaw.eval import runner
from mnemoclaw.eval.runner import holds, snippets_show
from mnemoclaw.search.snippets import Snippet, speaker
from mnemoclaw.text.tokenize import keyword_query


def terms(query: str) -> dict[str, float]:
    return dict.fromkeys(keyword_query(query).terms, 1.0)


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
