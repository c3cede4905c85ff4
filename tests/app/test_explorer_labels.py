"""The explorer page (AppTest, fixture biLM) where labels and layer weights meet: colour by label when a labelled
set comes in, "Fit s to my labels", why a weight moves the map little, and the Senses tab's "no clear clusters".
The logic is tested in tests/app/explore/test_fit.py, tests/app/explore/test_clusters.py and
tests/app/session/test_widgets.py."""

from __future__ import annotations

import numpy as np
import pytest

from app.explore import fit as fm
from app.explore import mixing
from app.explore import weight_effect as we
from app.render.safe import shown
from app.session import keys, link
from tests.conftest import frame_of, no_errors, start_app

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches_per_module")

UNLABELLED = "The bank was closed.\nWe walked along the bank.\nThe bank lent us money.\nA bank of fog rolled in."


def page_layers(at) -> tuple[np.ndarray, list[str | None]]:
    """The occurrences' layers (L + 1, n, D) and labels of the page's frame, from the page's own table."""
    frame = frame_of(at)
    table = at.session_state[keys.private("table")][1]
    labels = [table.lines[table.line_of_row[r]].label for r in frame.rows]
    return table.layers(frame.controls.layer_norm)[:, frame.rows], labels


def test_colour_goes_to_label_when_a_labelled_example_replaces_unlabelled_sentences():
    at = start_app(s=UNLABELLED, word="bank")
    no_errors(at)
    # no labels, one spelling, no clear clusters: "sentence" is the one choice (no radio for it)
    assert at.session_state[keys.COLOR_BY] == "sentence" and not any(r.key == keys.COLOR_BY for r in at.radio)
    at.button(key=keys.key("example_bank")).click().run()
    no_errors(at)
    assert at.radio(key=keys.COLOR_BY).value == "label"  # was: still "sentence"
    at.radio(key=keys.COLOR_BY).set_value("sentence").run()  # the user's choice for this set stays
    at.button(key=keys.key("preset_top")).click().run()
    no_errors(at)
    assert at.radio(key=keys.COLOR_BY).value == "sentence"
    assert link.to_query(at.session_state[keys.LAST])["color"] == "sentence"


def test_a_link_keeps_its_colour():
    at = start_app(ex="bank", word="bank", color="sentence")
    no_errors(at)
    assert at.radio(key=keys.COLOR_BY).value == "sentence"


# Two spellings of one word as two "senses": the fixture biLM's layer 0 (the character CNN) tells them apart, so
# these labels support a fit, while its random contextual layers tell the bank example's senses apart no better
# than chance.
SPELLINGS = "\n".join(
    [
        "[lower] We sat on the bank today.",
        "[lower] The bank was wet.",
        "[lower] A bank of fog came.",
        "[upper] Bank robbers fled.",
        "[upper] Bank holidays are long.",
        "[upper] Bank notes are paper.",
    ]
)


def test_fit_s_sets_the_sliders_and_says_the_score():
    at = start_app(s=SPELLINGS, word="bank")
    no_errors(at)
    layers, labels = page_layers(at)
    fit = fm.fit_mix(layers, labels)
    assert fm.unsupported(fit, labels) == ""  # the fit is one to act on
    w = fm.weights_for_s(fit.s, keys.W_RANGE, keys.W_STEP)
    at.slider(key=keys.weight_key(2)).set_value(1.5).run()  # away from the fit, so that the fit has to move it
    assert at.slider(key=keys.weight_key(2)).value != pytest.approx(w[2])
    at.button(key=keys.key("fit_s")).click().run()
    no_errors(at)
    assert [at.slider(key=keys.weight_key(j)).value for j in range(3)] == pytest.approx(list(w))
    frame = frame_of(at)
    np.testing.assert_allclose(frame.s, mixing.softmax(w))
    (message,) = [shown(m.value) for m in at.success]
    assert message == fm.fit_message(fit, mixing.softmax(w), fm.accuracy(layers, labels, mixing.softmax(w)))
    # the score it names is the mix's 1-NN accuracy that the Similarity tab shows
    assert frame.separation[-1].knn_accuracy == pytest.approx(fm.accuracy(layers, labels, mixing.softmax(w)))
    query = link.to_query(at.session_state[keys.LAST])
    assert query.get("w", ",".join("0" for _ in w)) == ",".join(f"{v:g}" for v in w)  # all zeros: left out
    at.button(key=keys.key("preset_equal")).click().run()  # said once
    assert not at.success


def test_a_fit_at_chance_says_so_and_keeps_the_sliders():
    at = start_app(ex="bank", word="bank")
    no_errors(at)
    layers, labels = page_layers(at)
    fit = fm.fit_mix(layers, labels)
    reason = fm.unsupported(fit, labels)
    assert reason  # the fixture biLM's layers separate the bank example's senses no better than chance
    at.button(key=keys.key("fit_s")).click().run()
    no_errors(at)
    assert [at.slider(key=keys.weight_key(j)).value for j in range(3)] == [0.0, 0.0, 0.0]
    assert not at.success
    assert [shown(m.value) for m in at.warning] == [reason]


def test_no_fit_button_without_two_labelled_senses():
    at = start_app(s=UNLABELLED, word="bank")
    no_errors(at)
    assert not any(b.key == keys.key("fit_s") for b in at.button)


def test_the_page_says_why_a_weight_moves_the_map_little(monkeypatch):
    at = start_app(ex="bank", word="bank")
    no_errors(at)
    layers, _ = page_layers(at)
    effect = we.layer_effect(layers)
    assert we.weight_note(effect) == ""  # the fixture's layer 2 is 1.6 times as long as layer 1: nothing to say
    assert not [c for c in at.caption if "moves the map little" in c.value]
    monkeypatch.setattr(we, "LONGER", 1.5)
    at = start_app(ex="bank", word="bank")  # a new session (the note is kept while the occurrences stay)
    no_errors(at)
    note = we.weight_note(effect)
    assert note.startswith("Layer 2's vectors are 1.6× as long as the others' here")
    assert [shown(c.value) for c in at.caption if "moves the map little" in c.value] == [note]
    at.checkbox(key=keys.LAYER_NORM).check().run()  # layer-normed layers: no length to blame
    no_errors(at)
    assert not [c for c in at.caption if "evens the lengths" in c.value]


def test_the_senses_tab_says_no_clear_clusters():
    at = start_app(s=UNLABELLED + "\nThe bank closed early.", word="bank", tab="senses")
    no_errors(at)
    found = frame_of(at).clusters
    assert found is not None and not found.clear and frame_of(at).cluster_labels is None
    assert any(m.value.startswith("**No clear clusters**: ") for m in at.markdown)
    assert not any(b.key == keys.key("colour_by_cluster") for b in at.button)
