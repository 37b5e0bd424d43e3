"""The redactor on secrets as people write them and on look-alikes that are not secrets
(tests/secret_phrases.py); the real paths into memory are tested beside their kin (test_mcp,
test_ui, test_imports, test_sessions, test_runtime)."""

from __future__ import annotations

import pytest

from mnemoclaw.text.secrets import REDACTED, redact, redact_counted, redactions

from secret_phrases import HELD_OUT_NEGATIVE, HELD_OUT_POSITIVE, TUNE_NEGATIVE, TUNE_POSITIVE


@pytest.mark.parametrize("text, secret", TUNE_POSITIVE + HELD_OUT_POSITIVE)
def test_a_secret_in_prose_is_redacted_and_the_note_still_reads(text, secret):
    assert redact(text) == text.replace(secret, REDACTED)


@pytest.mark.parametrize("text", TUNE_NEGATIVE + HELD_OUT_NEGATIVE)
def test_a_look_alike_is_left_as_written(text):
    assert redact(text) == text


@pytest.mark.parametrize("text", ["my bank PIN is 4921", "密码是hunter22", "password: hunter2hunter2",
                                  "token: [REDACTED] and password hunter22",
                                  'password = "correct horse battery staple"'])
def test_redacting_twice_changes_and_counts_nothing(text):
    once, n = redact_counted(text)
    assert n >= 1 and redact_counted(once) == (once, 0)


def test_each_secret_is_named_by_its_pattern_where_it_stands():
    text = "deploy with sk-proj-Q8aZ3kLm9PqR2sT5uV7wX0yB4cD6eF1gH; my bank PIN is 4921; 验证码：482913"
    found = redactions(text)
    assert [(r.kind, text[r.start:r.end]) for r in found] == [
        ("openai/anthropic key", "sk-proj-Q8aZ3kLm9PqR2sT5uV7wX0yB4cD6eF1gH"),
        ("prose (en)", "4921"), ("prose (zh)", "482913")]
    assert redact_counted(text) == (f"deploy with {REDACTED}; my bank PIN is {REDACTED}; 验证码：{REDACTED}", 3)


def test_a_value_in_quotes_goes_whole_with_its_quotes_left():
    assert redact("Passphrase: 'my dog rex' and more") == f"Passphrase: '{REDACTED}' and more"
    assert redact("口令是「芝麻 开门」") == f"口令是「{REDACTED}」"


def test_a_text_whose_lowercase_is_longer_is_read_as_written():
    text = "İstanbul trip: my bank PIN is 4921, the PIN field stays empty"  # "İ".lower() is two characters
    assert len(text.lower()) != len(text)
    assert redact(text) == text.replace("4921", REDACTED)
