"""A new sentence set moves the word box to a word that has a map, when the word it held occurs too rarely in
the new text to be mapped; a link's explicit word that has a map is kept."""

from __future__ import annotations

import pytest

from app.explore.projections import MIN_POINTS_FOR_MAP
from tests.conftest import APP, no_errors, start_app

TIMEOUT = 90

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches_per_module")

ORGAN = "\n".join(
    [
        "The organ filled the church with sound.",
        "She learned to play the organ as a child.",
        "The old organ needed new pipes.",
        "An organ recital drew a large crowd.",
        "The heart is a vital organ.",
        "The skin is the largest organ of the body.",
        "He donated an organ to his brother.",
        "The liver is an organ that filters blood.",
        "The organ builder tuned every pipe.",
        "A transplant replaced the damaged organ.",
    ]
)
LABELLED = "\n".join(
    [
        "[instrument] The organ filled the church with sound.",
        "[instrument] The old organ needed new pipes.",
        "[body] The heart is a vital organ.",
        "[body] The liver is an organ that filters blood.",
        "The church choir sang and the church bells rang in the church tower.",
        "A church stood on the hill near the church school.",
    ]
)


def word(at) -> str:
    return at.selectbox(key="explorer_word").value


def test_a_new_set_leaves_a_word_that_would_have_no_map():
    at = start_app(APP, TIMEOUT)  # the play example, on "play"
    assert word(at) == "play"
    at.text_area(key="explorer_sentences").input(ORGAN).run()
    no_errors(at)
    assert word(at) == "organ" and at.query_params["word"] == "organ"
    assert "no map" not in " ".join(w.value for w in at.warning)


def test_a_new_set_from_a_link_leaves_a_word_that_would_have_no_map():
    at = start_app(APP, TIMEOUT, s="The play was long.\nA play in two acts.\nWe saw the play.", word="play")
    assert word(at) == "play"
    at.text_area(key="explorer_sentences").input(ORGAN).run()
    no_errors(at)
    assert word(at) == "organ"


def test_a_labelled_set_moves_to_the_word_its_labels_are_about():
    at = start_app(APP, TIMEOUT)
    at.text_area(key="explorer_sentences").input(LABELLED).run()
    no_errors(at)
    assert word(at) == "organ"  # "church" is more frequent, but occurs in no labelled line


def test_a_links_word_that_has_a_map_is_kept():
    text = ORGAN + "\nThey play the organ.\nChildren play outside."
    at = start_app(APP, TIMEOUT, s=text, word="play")
    no_errors(at)
    assert word(at) == "play" and at.query_params["word"] == "play"
    assert text.count("play") >= MIN_POINTS_FOR_MAP


def test_a_word_chosen_in_the_same_set_is_kept_even_without_a_map():
    at = start_app(APP, TIMEOUT, s=ORGAN, word="organ")
    at.selectbox(key="explorer_word").select("church").run()
    no_errors(at)
    assert word(at) == "church"
