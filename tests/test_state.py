"""app.state: the one writer of the layer-weight sliders, and the controls that outlive a page switch."""
from __future__ import annotations

from app import explore as ex
from app import state


def test_set_layer_weights_sets_sliders_and_the_remembered_view():
    ss = {"_view": ex.View(text="x", weights=(0.0, 0.0, 0.0))}
    assert state.set_layer_weights(ss, [1.0, -9.0, 2.5]) == (1.0, -5.0, 2.5)  # clipped to the slider range
    assert [ss[state.weight_key(j)] for j in range(3)] == [1.0, -5.0, 2.5]
    assert ss["_view"].weights == (1.0, -5.0, 2.5) and ss["_view"].text == "x"
    assert state.set_preset({}, "top", 3) == ex.preset_weights("top", 3)


def test_kept_controls_come_back_only_when_forgotten():
    ss = {"nn_k": 7, "nn_same_word": True, "query_occ": 3, "color_by": "sentence", "other": 1}
    state.remember(ss)
    for key in state.KEPT:
        del ss[key]  # what Streamlit does to widgets that were not drawn
    ss["nn_k"] = 9  # set anew meanwhile: not overwritten
    state.restore(ss)
    assert (ss["nn_k"], ss["nn_same_word"], ss["query_occ"], ss["color_by"]) == (9, True, 3, "sentence")
