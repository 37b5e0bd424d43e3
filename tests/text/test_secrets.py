"""The redactor on secrets as people write them and on look-alikes that are not secrets
(tests/secret_phrases.py); the real paths into memory are tested beside their kin (test_mcp,
test_ui, test_imports, test_sessions, test_runtime)."""

from __future__ import annotations

import pytest

from mnemoclaw.text.identifiers import luhn, verhoeff
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


# -- identity and card numbers (text/identifiers.py) ----------------------------------------------

@pytest.mark.parametrize("text, kind, number", [
    ("SSN 078-05-1120, on file", "us ssn", "078-05-1120"),
    ("ssn 123 45 6789", "us ssn", "123 45 6789"),
    ("Social Security Number: 219099999", "us ssn", "219099999"),
    ("Visa 4111 1111 1111 1111 12/27", "payment card", "4111 1111 1111 1111"),
    ("mastercard 2223003122003222", "payment card", "2223003122003222"),
    ("Diners 3056 930902 5904", "payment card", "3056 930902 5904"),
    ("身份证 11010519491231002X。", "china resident id", "11010519491231002X"),
    ("統一編號以外：身分證 B187654324", "taiwan id", "B187654324"),
    ("HKID: AB987654(3)", "hong kong id", "AB987654(3)"),
    ("주민번호 920315-2345674", "korea rrn", "920315-2345674"),
    ("NINO: AB123456C", "uk nino", "AB123456C"),
    ("my NI no. is AB 12 34 56 C", "uk nino", "AB 12 34 56 C"),
    ("SIN: 130692544", "canada sin", "130692544"),
    ("numéro d'assurance sociale 046-454-286", "canada sin", "046-454-286"),
    ("Aadhaar: 4973 1220 1855", "india aadhaar", "4973 1220 1855"),
    ("Aadhaar no. 497312201855", "india aadhaar", "497312201855"),
    ("CPF 12345678909", "brazil cpf", "12345678909"),
    ("CPF 111.444.777-35", "brazil cpf", "111.444.777-35"),
    ("DNI 87654321-X", "spain dni", "87654321-X"),
    ("NIE Y7654321G", "spain nie", "Y7654321G"),
    ("cf rssmra85t10a562s", "italy codice fiscale", "rssmra85t10a562s"),
])
def test_an_identity_or_card_number_is_redacted_and_named(text, kind, number):
    assert [(r.kind, text[r.start:r.end]) for r in redactions(text)] == [(kind, number)]
    assert redact_counted(text) == (text.replace(number, REDACTED), 1)


@pytest.mark.parametrize("text", [
    # the same shapes with a check that fails, or a range never issued
    "SSN 000-12-3456", "SSN 666-12-3456", "SSN 900-12-3456", "SSN 123-00-4567", "SSN 123-45-0000",
    "Visa 4111 1111 1111 1112", "card 9111 1111 1111 1110",  # Luhn passes, no issuer starts with 9
    "身份证 110105194912310021", "身份证 110105194913310021", "身份证 990105194912310023",  # check, month 13, province
    "ID A123456788", "HKID A123456(4)", "RRN 850101-1234567", "RRN 990230-1234569",  # 30 February
    "NI GB 12 34 56 A", "QQ 12 34 56 C", "the compound SR141716A", "NI number QQ123456C",
    "Aadhaar 1234 5678 9010", "Aadhaar 2345 6789 0123", "CPF 123.456.789-00", "CPF 111.111.111-11",
    "DNI 12345678A", "NIE X1234567A", "CF RSSMRA85T10A562T", "CF RSSMRA85T32A562Y",  # day 32
    # ordinary numbers of the same lengths
    "call 415-555-0132", "call (415) 555-0132", "+1 415 555 0132", "móvil 612 345 678", "móvil 612-345-678",
    "tel. 06 12 34 56 78", "手机 138 1234 5678", "手机13812345678", "ISBN 978-0-306-40615-7",
    "ISBN 9780306406157", "ISBN 0-306-40615-2", "on 2023-01-15", "on 20230115", "ZIP 94105-1234",
    "order 112-1234567-1234567", "IMEI 352099001761481", "tracking 9400 1000 0000 0000 0000 00",
    "ts 1700000000000", "at 40.7128, -74.0060", "$1,234,567.89", "order number 123456789",
    # glued to a longer number, a word or a path: not one standing alone
    "x123-45-6789", "123-45-67890", "1 123-45-6789 2", "v2.4111111111111111", "#123-45-6789",
    "sha 4111111111111111abc", "/tmp/11010519491231002X.log",
])
def test_a_look_alike_number_is_left_as_written(text):
    assert redact(text) == text, redactions(text)


def test_a_bare_number_or_a_3_3_3_one_is_taken_only_after_its_name():
    assert redact("ticket 219099999") == "ticket 219099999"
    assert redact("SSN 219099999") == f"SSN {REDACTED}"
    assert redact("ring 612 345 678") == "ring 612 345 678"  # a Spanish mobile; it passes Luhn
    assert redact("SIN 612 345 678") == f"SIN {REDACTED}"
    assert redact("ligue 12345678909") == "ligue 12345678909"  # a CPF's digits, unpunctuated
    assert redact("order 497312201855") == "order 497312201855"  # an Aadhaar's digits, ungrouped


def test_ordinary_phone_numbers_drawn_at_random_are_left():
    """A Spanish, Portuguese or Polish mobile is written 3-3-3, as a Canadian SIN is, and one in ten
    passes Luhn: without the name before it none may be taken."""
    import random

    rng = random.Random(46)
    phones = [f"{rng.choice('6789')}{rng.randrange(100):02} {rng.randrange(1000):03} {rng.randrange(1000):03}"
              for _ in range(300)]
    assert sum(luhn(p) for p in phones) > 10  # the test would prove nothing otherwise
    assert [p for p in phones if redact(f"call {p} tonight") != f"call {p} tonight"] == []


def test_the_checks_catch_what_they_promise():
    # Verhoeff (Aadhaar): every single-digit error and every swap of two adjacent digits
    number = "497312201855"
    assert verhoeff(number)
    for i in range(len(number)):
        for d in "0123456789":
            if d != number[i]:
                assert not verhoeff(number[:i] + d + number[i + 1:])
        if i + 1 < len(number) and number[i] != number[i + 1]:
            assert not verhoeff(number[:i] + number[i + 1] + number[i] + number[i + 2:])
    # Luhn: the issuers' published test numbers
    assert all(luhn(n) for n in ("4111111111111111", "5555555555554444", "378282246310005", "6011111111111117",
                                 "3530111333300000", "30569309025904", "4222222222222"))
    assert not luhn("4111111111111112")


def test_each_number_in_a_note_is_counted_and_a_redacted_one_is_not_taken_again():
    text = "SSN 078-05-1120; card 4111-1111-1111-1111; 身份证 11010519491231002X; password hunter22"
    once, n = redact_counted(text)
    assert n == 4 and "078" not in once and "4111" not in once and "1101" not in once, once
    assert redact_counted(once) == (once, 0)
