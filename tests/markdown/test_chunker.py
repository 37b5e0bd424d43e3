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

