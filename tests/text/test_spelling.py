"""Another spelling of a name (text/spelling.py): alike by sound or by one typo, not by chance."""

import pytest

from mnemoclaw.text.spelling import alike, first_letters, length_range, sound
from mnemoclaw.text.tokenize import analyze


@pytest.mark.parametrize("asked, held", [
    ("Muhammad", "Muhhamed"), ("Mohammed", "Muhhamed"), ("Aqib", "Akib"), ("Eliza", "Elise"),
    ("Nikolas", "Nicolas"), ("Caroline", "Karoline"), ("Deborah", "Debra"), ("Jon", "John"),
    ("Katherine", "Katharine"), ("Melanie", "Melaney"),
    # a short name with a letter doubled, dropped or two swapped, its consonants the same
    ("Saam", "Sam"), ("Jno", "Jon"), ("Nte", "Nate"), ("Timm", "Tim"),
    # one vowel for another in a short spelling that is nobody's name
    ("Juhn", "John"), ("Tym", "Tim"), ("Aqyb", "Aqib"), ("Marea", "Maria"), ("Mil", "Mel"), ("Dava", "Dave"),
    # a name the stemmer cut as a verb's -ing (Turing held as ture, Manning as man)
    ("Thuring", "Turing"), ("Fleeming", "Fleming"), ("Mannning", "Manning"),
    # a name the stemmer cut as a noun's -er (Outlander held as outland)
    ("Outlender", "Outlander"),
    # a typo in the first two letters: one added before the name, or the two swapped
    ("Oultraboost", "Ultraboost"), ("Lutraboost", "Ultraboost"),
])
def test_spellings_of_one_name_are_alike_as_the_index_holds_them(asked, held):
    term = analyze(held)[0]  # memory's side is an index term: lowercased and stemmed
    assert alike(asked, term), (asked, term)
    assert term[0] in first_letters(asked.lower())
    low, high = length_range(asked.lower())
    assert low <= len(term) <= high


@pytest.mark.parametrize("asked, held", [
    ("Tom", "Tim"), ("Evan", "even"), ("Nate", "note"), ("Gina", "Jean"), ("Keiko", "Chidi"),
    ("Sam", "some"), ("Muhammad", "made"), ("Caroline", "careful"), ("Priya", "pray"),
    ("Jn", "Jon"), ("Bbo", "Bob"), ("Tam", "Tim"),  # too short; consonants moved; a letter for another
    ("Dan", "Don"), ("Ben", "Bin"), ("Mia", "Mae"),  # one vowel off, but a name of its own
    ("Juhn", "join"),  # two letters changed
])
def test_other_names_and_words_are_not_alike(asked, held):
    assert not alike(asked, analyze(held)[0])


def test_the_same_word_or_a_number_is_no_other_spelling():
    assert not alike("caroline", "carolin")  # "Caroline" stemmed: the name itself, found as it is
    assert not alike("r2d2", "r2d3") and not alike("muhammad", "2024")


def test_sound_merges_letters_written_for_one_sound():
    assert sound("muhammad") == sound("mohamed") == "md"
    assert sound("nikolas") == sound("nicolas") and sound("philip") == sound("filip")


@pytest.mark.parametrize("asked, written", [
    ("Manning", "MA"), ("Turing", "Tar"), ("States", "SITA"), ("Kennedy", "Kenya"), ("Wales", "Wola"),
    ("Esch", "E"),
])
def test_an_ending_put_back_finds_a_term_but_the_word_memory_writes_must_spell_the_name(asked, written):
    """Kenya is held as the term kenya, which Kennedy may be with -ed cut; memory writes Kenya."""
    term = analyze(written)[0]
    assert alike(asked, term)  # the index term is looked at as any of its unstemmed forms
    assert not alike(asked, written.lower(), stemmed=False)


@pytest.mark.parametrize("asked, written", [("Thuring", "Turing"), ("Mannning", "Manning"), ("Aqib", "Akib"),
                                            ("Muhammad", "Muhhamed"), ("Nikolas", "Nicolas")])
def test_a_respelled_name_is_alike_the_word_memory_writes(asked, written):
    assert alike(asked, written.lower(), stemmed=False)
