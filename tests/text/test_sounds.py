"""Chinese characters read alike (text/sounds.py): what an input method offers for one syllable."""

from mnemoclaw.text.sounds import TABLE, alike, readings, table


def test_characters_of_one_syllable_are_alike_whatever_their_tone():
    assert {"思", "丝", "司"} <= alike("斯") and "斯" not in alike("斯")
    assert "章" in alike("张") and "鹿" in alike("路")
    assert "咔" in alike("卡")  # kā and kǎ: an input method asks for no tone
    assert "ka" in readings("卡") and readings("卡") == tuple(dict.fromkeys(readings("卡")))


def test_other_syllables_and_other_text_are_not_alike():
    assert "李" not in alike("张") and "明" not in alike("民")  # zhāng / lǐ; míng / mín
    assert "斯" not in alike("赫") and readings("赫") == ("he",)  # hè; its rare reading shì is left out
    assert alike("a") == frozenset() and readings("a") == ()


def test_the_shipped_table_is_the_one_the_readings_make():
    assert TABLE.read_text("utf-8") == table(), "text/sounds.txt is stale: run `python -m mnemoclaw.text.sounds`"
