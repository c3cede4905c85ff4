"""elmo_core.data.wordforms: which tokens count as a word, on the cases where a rule has to decide."""
from __future__ import annotations

import pytest

from elmo_core.data.tokenize import tokenize
from elmo_core.data.wordforms import find_form, form_grouper, form_groups, is_form, normalise, token_pattern, word_forms


def counted(word: str, text: str, pos: str = "", inflections: bool = True, irregular=()) -> list[str]:
    """The tokens of ``text`` (Moses-tokenized, as everywhere else) that count as ``word``."""
    forms = word_forms(word, pos, inflections, irregular)
    return [t for t in tokenize(text) if is_form(t, forms)]


@pytest.mark.parametrize("word, present, absent", [
    ("play", {"plays", "played", "playing"}, {"playes"}),
    ("make", {"makes", "making", "maked"}, set()),
    ("study", {"studies", "studied", "studying"}, set()),
    ("plan", {"planned", "planning", "plans"}, set()),
    ("plays", {"play", "plays"}, set()),
])
def test_word_forms(word, present, absent):
    forms = word_forms(word, inflections=True)
    assert present <= forms and not (absent & forms)
    assert word_forms(word, inflections=False) == {word}


def test_forms_for_a_pos():
    assert {"bank", "banks"} <= word_forms("bank", "n")
    assert {"played", "playing", "plays"} <= word_forms("play", "v")
    assert {"stopped", "stopping"} <= word_forms("stop", "v")
    assert {"studies", "studied"} <= word_forms("study", "v")
    assert {"lighter", "lightest"} <= word_forms("light", "a")
    assert "banks" not in word_forms("bank", "a")
    assert find_form(["The", "Banks", "flooded"], word_forms("bank", "n")) == 1
    assert find_form(["nothing", "here"], {"bank"}) is None
    assert {"dying", "died", "dies"} <= word_forms("die", "v")
    assert word_forms("watch", "n") == {"watch", "watches", "watchs"}
    with pytest.raises(ValueError, match="pos must be"):
        word_forms("bank", "s")


def test_bank_banks_banking():
    text = "The bank and two banks were banking on it ; a banker banked nothing ."
    assert counted("bank", text) == ["bank", "banks", "banking", "banked"]  # noun and verb, not "banker"
    assert counted("bank", text, pos="n") == ["bank", "banks"]
    assert counted("bank", text, inflections=False) == ["bank"]
    assert counted("banks", text) == ["bank", "banks", "banking", "banked"]  # an -s form: its base too
    assert counted("banking", text) == ["banking"]  # not a lemmatizer: no base is guessed for -ing


def test_spring_springs_sprung():
    text = "In spring the springs rose ; the trap sprang , it had sprung ."
    assert counted("spring", text) == ["spring", "springs"]  # irregular forms are not guessed
    assert counted("spring", text, pos="v", irregular={"sprang", "Sprung"}) == ["spring", "springs", "sprang",
                                                                               "sprung"]
    assert "springer" not in word_forms("spring")


def test_play_played_playing():
    text = "They play , she plays , we played , you are playing ; the player replayed it ."
    assert counted("play", text) == ["play", "plays", "played", "playing"]
    assert counted("Played", text, inflections=False) == ["played"]
    assert counted("play", text, pos="n") == ["play", "plays"]
    assert "player" not in word_forms("play")  # -er only where the caller says the word is an adjective


def test_capitalised_forms():
    text = "Bank BANK bank Banks BANKING"
    assert counted("bank", text) == ["Bank", "BANK", "bank", "Banks", "BANKING"]
    assert counted("BANK", text, inflections=False) == ["Bank", "BANK", "bank"]


def test_possessives():
    text = "The bank's loans , the banks' vaults and the bank\u2019s river ."
    assert tokenize(text)[1:3] == ["bank", "'s"]  # the tokenizer splits the ASCII possessive off
    assert counted("bank", text) == ["bank", "banks", "bank"]
    assert counted("bank's", text, inflections=False) == ["bank", "bank"]  # the word's ending goes too
    # a token that kept its ending (text tokenized by something else, split on spaces) still counts
    assert [is_form(t, word_forms("bank")) for t in ("bank\u2019s", "Bank's", "banks'", "bank-'s")] == \
        [True, True, True, False]
    assert not is_form("'s", word_forms("s", inflections=False) | {"s"})  # the clitic alone is no word
    assert normalise("'s") == "'s" and normalise("Banks'") == "banks"


def test_hyphenated_words():
    text = "The river-bank and the bank , a bank-holiday ."
    assert counted("bank", text) == ["bank"]
    assert counted("river-bank", text) == ["river-bank"]
    assert "river-banks" in word_forms("river-bank")


def test_words_that_only_look_inflected():
    assert word_forms("glass") >= {"glasses"} and "glas" not in word_forms("glass")
    assert "bu" not in word_forms("bus") and "thi" not in word_forms("this")
    assert "new" in word_forms("news")  # the documented false friend of the -s rule
    assert word_forms("  ") == frozenset()


def test_token_pattern_agrees_with_is_form():
    line = "the bank 's river-bank , banks ' and Banking bankers"
    forms = word_forms("bank")
    hits = [m.group(0) for m in token_pattern(forms).finditer(line)]
    assert hits == ["bank", "banks", "Banking"]
    assert [t for t in line.split() if is_form(t, forms)] == hits
    with pytest.raises(ValueError):
        token_pattern(frozenset())


def test_same_case_keeps_the_typed_capitals_over_the_shared_spelling():
    from elmo_core.data.wordforms import same_case
    assert same_case("Banks", "Bank") and same_case("Bank's", "Bank") and same_case("Bank\u2019s", "Bank")
    assert not same_case("banks", "Bank") and not same_case("BANKS", "Bank") and not same_case("bank", "Bank")
    assert same_case("studies", "study") and not same_case("Studies", "study")



def test_form_groups_join_capitals_and_plurals():
    tokens = ["<S>", "the", "The", "trunk", "Trunks", "trunks", "bass", "Bass", "glasses", "glass", "banking", "news", "TRUNK"]
    groups = form_groups(tokens)
    assert groups == [0, 1, 1, 3, 3, 3, 6, 6, 8, 8, 10, 11, 3]  # "glass" joins "glasses", which comes first
    # "banking" (-ing) stays its own word; "news" stays apart while "new" is not in the list, and joins it when it is
    # (the rule's known false friend)
    assert form_groups(["new", "news"]) == [0, 0]


def test_form_grouper_finds_tokens_outside_the_list():
    group_of = form_grouper(["<UNK>", "trunks", "trunk", "bank"], unknown=0)
    assert [group_of(t) for t in ["Trunks", "TRUNK", "trunk", "Banks", "bank's", "river"]] == [1, 1, 1, 3, 3, 0]
