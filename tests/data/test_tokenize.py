"""Moses tokenization (sacremoses) as the app and the corpus use it."""
import pytest

from elmo_core import tokenize


@pytest.mark.parametrize("text, expected", [
    ("John's book.", ["John", "'s", "book", "."]),
    ("industry 's growth", ["industry", "'s", "growth"]),  # already tokenized text keeps its clitic
    ("They 're here", ["They", "'re", "here"]),
    ('"Hello," she said... (really)!', ['"', "Hello", ",", '"', "she", "said", "...", "(", "really", ")", "!"]),
    ("AT&T costs $5.00", ["AT", "&", "T", "costs", "$", "5.00"]),  # no HTML escaping to &amp;
    ("  \n ", []),
    ("東京 😀", ["東", "京", "😀"]),  # Moses splits CJK text into characters
])
def test_tokenize(text, expected):
    assert tokenize(text) == expected


def test_idempotent_on_own_output():
    text = "The bank's rates rose, didn't they? Yes -- by 2.5% in the U.S. last year."
    once = tokenize(text)
    assert tokenize(" ".join(once)) == once


def test_not_a_string():
    with pytest.raises(TypeError):
        tokenize(["a", "b"])
