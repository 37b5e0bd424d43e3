"""Chinese characters read alike (text/sounds.py): what an input method offers for one syllable."""

from mnemoclaw.text.sounds import TABLE, alike, readings, table


def test_characters_read_alike_share_a_syllable_and_its_tone():
    assert {"思", "丝", "司"} <= alike("斯") and "斯" not in alike("斯")
    assert "章" in alike("张") and "鹿" in alike("路")
    assert "咔" in alike("卡") and "乐" in alike("勒")  # kǎ, a reading of both; lè, 勒's second
    assert readings("卡") == ("ka3", "qia3") and readings("张") == ("zhang1",)


def test_other_syllables_and_other_text_are_not_alike():
    assert "李" not in alike("张") and "明" not in alike("民")  # zhāng / lǐ; míng / mín
    assert "斯" not in alike("赫")  # hè or shì; sī or shǐ
    assert "司" in alike("斯") and "死" not in alike("斯")  # sī; sǐ
    assert "鲁" not in alike("吕") and readings("吕") == ("lv3",)  # lǚ, lǔ
    assert alike("a") == frozenset() and readings("a") == ()


def test_the_shipped_table_is_the_one_the_readings_make():
    assert TABLE.read_text("utf-8") == table(), "text/sounds.txt is stale: run `python -m mnemoclaw.text.sounds`"
