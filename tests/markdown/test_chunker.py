from mnemoclaw.markdown.chunker import chunk_markdown, text_hash
from mnemoclaw.text.tokenize import estimate_tokens


def test_small_file_is_one_chunk_with_one_based_lines():
    chunks = chunk_markdown("# Title\n\nhello world\n")
    assert len(chunks) == 1
    c = chunks[0]
    assert (c.start_line, c.end_line) == (1, 3)  # the trailing empty line 4 is blank
    assert c.text == "# Title\n\nhello world"
    assert c.hash == text_hash(c.text)


def test_chunks_respect_token_budget_and_overlap_whole_lines():
    lines = [f"line {i}: " + "word " * 6 for i in range(200)]  # ~10 tokens a line
    text = "\n".join(lines)
    chunks = chunk_markdown(text, tokens=100, overlap=20)
    assert len(chunks) > 5
    for c in chunks:
        assert estimate_tokens(c.text) <= 100 + 1  # newlines count a little
        # every chunk is made of whole source lines
        assert c.text.split("\n") == lines[c.start_line - 1 : c.end_line]
    for a, b in zip(chunks, chunks[1:], strict=False):
        shared = lines[b.start_line - 1 : a.end_line]
        assert 1 <= len(shared) <= 2  # whole ~10-token lines, within the 20-token overlap
        assert sum(len(x) + 1 for x in shared) <= 20 * 4
        assert b.start_line > a.start_line  # always progressing
    assert chunks[-1].end_line == 200


def test_zero_overlap_makes_disjoint_chunks():
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(50))
    chunks = chunk_markdown(text, tokens=60, overlap=0)
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.start_line == a.end_line + 1


def test_chinese_counts_a_character_as_a_token():
    # 2 000 Chinese characters on separate lines: with a 4-chars-a-token budget a chunk
    # would hold 1 600 characters; counting each as a token keeps it near 400.
    text = "\n".join("我们决定用数据库作为默认索引。" for _ in range(140))
    chunks = chunk_markdown(text, tokens=400, overlap=80)
    assert len(chunks) >= 5
    for c in chunks:
        assert estimate_tokens(c.text) <= 410
        assert len(c.text) <= 450  # not the 1 600 a 4-chars-a-token budget would allow


def test_over_long_line_is_sliced_without_splitting_combining_sequences():
    line = ("e\u0301" * 300) + ("👍🏽" * 200)  # e + combining acute; thumbs up + skin tone
    chunks = chunk_markdown(line, tokens=50, overlap=0)
    assert len(chunks) > 3
    assert "".join(c.text for c in chunks) == line
    for c in chunks:
        assert c.start_line == c.end_line == 1
        assert not c.text.startswith("\u0301")
        assert not c.text.startswith("\U0001f3fd")


def test_blank_chunks_are_dropped_and_crlf_is_normalised():
    assert chunk_markdown("") == []
    assert chunk_markdown("\n\n   \n") == []
    chunks = chunk_markdown("a\r\nb\r\n")
    assert chunks[0].text == "a\nb"


def test_same_text_same_hash_different_text_different_hash():
    a = chunk_markdown("alpha\nbeta")[0]
    b = chunk_markdown("alpha\nbeta")[0]
    c = chunk_markdown("alpha\ngamma")[0]
    assert a.hash == b.hash != c.hash



# -- conversations ------------------------------------------------------------------------------

def _log(*messages: tuple[str, str]) -> str:
    """A daily log of ``(speaker, what was said)`` blocks, as ``## Speaker`` headings."""
    out = ["# 2024-03-01"]
    for who, said in messages:
        out += ["", f"## {who}", "", said]
    return "\n".join(out) + "\n"


def _messages_of(text: str) -> list[tuple[int, int]]:
    """Each message's lines (its heading to the line before the next heading)."""
    lines = text.split("\n")
    starts = [i + 1 for i, line in enumerate(lines) if line.startswith("## ")]
    return [(a, b - 1) for a, b in zip(starts, [*starts[1:], len(lines) + 1], strict=True)]


def _held(chunk, spans) -> list[int]:
    return [i for i, (a, b) in enumerate(spans) if a <= chunk.end_line and chunk.start_line <= b]


def test_a_long_reply_is_split_between_paragraphs_and_never_shares_a_chunk():
    reply = "\n\n".join(f"Paragraph {i}: " + "word " * 70 for i in range(8))  # ~360 chars a paragraph
    text = _log(("User", "How do I deploy the Flask app?"), ("Assistant", reply), ("User", "Thanks, and the database?"))
    spans = _messages_of(text)
    lines = text.split("\n")
    chunks = chunk_markdown(text, tokens=400, overlap=80)
    for c in chunks:
        held = _held(c, spans)
        # a chunk holding two messages holds both whole
        if len(held) > 1:
            assert all(c.start_line <= spans[i][0] and spans[i][1] - 1 <= c.end_line for i in held)
        assert c.text.split("\n") == lines[c.start_line - 1 : c.end_line]
    pieces = [c for c in chunks if _held(c, spans) == [1]]
    assert len(pieces) >= 2
    for c in pieces:  # each piece starts at a paragraph (or the speaker) and ends one
        assert c.text.startswith(("Paragraph", "## Assistant")) and c.text.rstrip().endswith("word")
    # the user's question is not in any chunk of the reply
    assert all("How do I deploy" not in c.text for c in pieces)


def test_short_messages_share_chunks_whole():
    turns = [("User" if i % 2 == 0 else "Assistant", f"Short message number {i} about the garden.") for i in range(30)]
    text = _log(*turns)
    spans = _messages_of(text)
    chunks = chunk_markdown(text, tokens=100, overlap=20)
    assert len(chunks) < len(turns)  # grouped, not one a chunk
    for c in chunks:
        for i in _held(c, spans):
            assert c.start_line <= spans[i][0] and spans[i][1] - 1 <= c.end_line  # whole
        assert estimate_tokens(c.text) <= 101


def test_a_turn_longer_than_a_small_chunk_budget_is_still_split_to_it():
    turns = [("User" if i % 2 == 0 else "Assistant", f"Turn {i}: " + "word " * 100) for i in range(6)]  # ~510 chars
    chunks = chunk_markdown(_log(*turns), tokens=64, overlap=8)
    assert chunks and all(estimate_tokens(c.text) <= 65 for c in chunks)


def test_a_code_block_stays_whole_where_it_fits():
    code = "```python\n" + "\n".join(f"x{i} = {i}" if i % 4 else "" for i in range(40)) + "\n```"
    reply = "Here is the script.\n\n" + "Some context. " * 60 + "\n\n" + code + "\n\n" + "After it. " * 60
    text = _log(("User", "Show me the script"), ("Assistant", reply))
    chunks = chunk_markdown(text, tokens=200, overlap=0)
    fenced = [c for c in chunks if "```python" in c.text]
    assert len(fenced) == 1 and fenced[0].text.count("```") == 2


def test_a_paragraph_over_the_chunk_size_is_split_by_lines():
    reply = "\n".join(f"line {i} " + "x" * 60 for i in range(60))  # one paragraph, ~4 000 chars
    text = _log(("User", "Dump the log"), ("Assistant", reply))
    chunks = chunk_markdown(text, tokens=200, overlap=20)
    assert all(estimate_tokens(c.text) <= 201 for c in chunks)
    assert chunks[-1].end_line == len(text.rstrip("\n").split("\n"))


def test_speakers_in_every_form_mnemoclaw_writes_or_reads():
    from mnemoclaw.markdown.chunker import speaker

    assert speaker("## User") == ("user", 2)
    assert speaker("### Assistant (10:32)") == ("assistant", 3)
    assert speaker("- **Caroline** (D1:2): Hi Mel!") == ("caroline", 0)
    assert speaker("- **User**: what was said") == ("user", 0)  # the session-memory hook's line
    assert speaker("**assistant:** sure") == ("assistant", 0)
    assert speaker("User: hello") == ("user", 0)  # a session transcript's line
    assert speaker("## Setup") is None  # a topic, not a speaker
    assert speaker("Date: 3:31 pm on 23 August, 2023") is None  # a field


def test_locomo_style_lines_and_transcripts_are_conversations_notes_are_not():
    locomo = "# A & B\n\nDate: today\n\n" + "\n".join(
        f"- **{'Caroline' if i % 2 else 'Melanie'}** (D1:{i}): " + "words " * 20 for i in range(1, 40))
    transcript = "\n".join(f"{'User' if i % 2 else 'Assistant'}: " + "said " * 30 for i in range(40))
    note = "# Tips\n\n" + "\n".join(["- **Note**: keep it short " + "x " * 40, "- **Warning**: never " + "y " * 40] * 10)
    for text in (locomo, transcript):
        lines = text.split("\n")
        for c in chunk_markdown(text, tokens=100, overlap=20):
            # every chunk is whole lines, and a message is a line here: nothing is split
            assert c.text.split("\n") == lines[c.start_line - 1 : c.end_line]
    # a note with two bold labels is chunked by lines, as before
    from mnemoclaw.markdown.chunker import _by_lines
    assert chunk_markdown(note, tokens=100, overlap=20) == _by_lines(list(enumerate(note.split("\n"), 1)), 400, 80)


def test_annotated_entries_of_a_conversation_are_still_chunked_apart():
    from mnemoclaw.markdown.annotations import annotate
    from mnemoclaw.markdown.chunker import chunk_spans

    reply = "\n\n".join(f"Paragraph {i}: " + "word " * 70 for i in range(6))
    text = _log(("User", "first question"), ("Assistant", reply), ("User", "second question")).replace(
        "## Assistant", "## Assistant <!-- importance: 8 -->", 1)
    spans, problems = annotate(text)
    assert not problems
    pieces = chunk_spans(text, spans, tokens=200, overlap=40)
    important = [c for c, attrs in pieces if attrs.get("importance") == 8]
    assert len(important) >= 2 and all("question" not in c.text for c in important)
    assert all(c.text.startswith(("Paragraph", "## Assistant")) for c in important)
