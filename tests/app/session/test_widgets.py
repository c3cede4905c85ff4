"""app/session/widgets.py: the widgets as one Controls and back, the weight sliders' one writer, the word box, the
query, the colour choice, the Compare boxes, and the controls that outlive a page switch."""

from __future__ import annotations

import dataclasses

import pytest

from app.explore import inputs, mixing
from app.explore.controls import Controls
from app.explore.examples import EXAMPLE_SETS
from app.render.safe import shown
from app.session import keys, link, widgets

EXAMPLES = {name: e.text for name, e in EXAMPLE_SETS.items()}
MODELS = ("default", "lm-only")


def test_the_new_views_controls_in_the_link_and_the_widgets():
    view, notes = link.from_query(
        {"show": "layers", "clusters": "4", "compare": "default,lm-only", "tab": "compare", "color": "cluster"},
        EXAMPLES,
        MODELS,
    )
    assert (view.map_view, view.n_clusters, view.compare, view.tab, view.color_by) == (
        "layers",
        4,
        ("default", "lm-only"),
        "compare",
        "cluster",
    ) and notes == []
    values = widgets.widget_values(view, 3)
    assert values[keys.MAP_VIEW] == "layers side by side" and values[keys.N_CLUSTERS] == 4
    assert (values[keys.COMPARE_A], values[keys.COMPARE_B]) == ("bundled:default", "bundled:lm-only")
    assert widgets.controls_of(values, 3, None, "default").compare == ("default", "lm-only")
    # an uploaded model on one side cannot travel: the comparison is left out of the link
    values[keys.COMPARE_B] = "session"
    assert widgets.controls_of(values, 3, None, "default").compare == ()
    for params, says in (
        ({"clusters": "1"}, "at least 2"),
        ({"clusters": "99"}, "outside 0 (chosen by silhouette) to 6"),
        ({"compare": "default,default"}, "not two different"),
        ({"compare": "x,y"}, "not two"),
        ({"show": "<b>"}, "unknown map view"),
    ):
        view, notes = link.from_query(params, EXAMPLES, MODELS)
        assert view.n_clusters in (0, 6) and view.compare == () and view.map_view == "mix", params
        assert any(says in n for n in notes), (params, notes)
    assert {keys.MAP_VIEW, keys.N_CLUSTERS, keys.COMPARE_A, keys.COMPARE_B} <= set(keys.KEPT)


def test_widgets_and_view_agree():
    view = Controls(sentences="a", word="bank", weights=(1.0, 2.0), k=3, tab="similarity", query=2, fold_case=False)
    values = widgets.widget_values(view, 3)
    assert [values[keys.weight_key(j)] for j in range(3)] == [1.0, 2.0, 0.0]  # a link made with another model
    assert values[keys.TAB] == keys.TABS["similarity"] and values[keys.K] == 3
    assert all(k.startswith(keys.PREFIX) for k in values)
    back = widgets.controls_of(values, 3, None, "default")
    assert back == dataclasses.replace(view, weights=(1.0, 2.0, 0.0))


def test_set_layer_weights_sets_sliders_and_the_remembered_view():
    ss = {keys.LAST: Controls(sentences="x", weights=(0.0, 0.0, 0.0))}
    assert widgets.set_layer_weights(ss, [1.0, -9.0, 2.5]) == (1.0, -5.0, 2.5)  # clipped to the slider range
    assert [ss[keys.weight_key(j)] for j in range(3)] == [1.0, -5.0, 2.5]
    assert ss[keys.LAST].weights == (1.0, -5.0, 2.5) and ss[keys.LAST].sentences == "x"
    assert widgets.set_preset({}, "top", 3) == mixing.preset_weights("top", 3)


def test_kept_controls_come_back_only_when_forgotten():
    ss = {
        keys.K: 7,
        keys.SAME_WORD: True,
        keys.QUERY: 3,
        keys.COLOR_BY: "sentence",
        keys.TAB: "Export",
        keys.MAP_VIEW: "layers side by side",
        keys.N_CLUSTERS: 3,
        keys.COMPARE_A: "bundled:default",
        keys.COMPARE_B: "bundled:lm-only",
        "other": 1,
    }
    widgets.remember(ss)
    for key in keys.KEPT:
        del ss[key]  # what Streamlit does to widgets that were not drawn
    ss[keys.K] = 9  # set anew meanwhile: not overwritten
    widgets.restore(ss)
    assert (ss[keys.K], ss[keys.SAME_WORD], ss[keys.QUERY], ss[keys.COLOR_BY], ss[keys.TAB]) == (
        9,
        True,
        3,
        "sentence",
        "Export",
    )
    assert (ss[keys.MAP_VIEW], ss[keys.N_CLUSTERS], ss[keys.COMPARE_A], ss[keys.COMPARE_B]) == (
        "layers side by side",
        3,
        "bundled:default",
        "bundled:lm-only",
    )


# ---- what the explorer page reads from its widgets --------------------------------------------------------------
def test_widgets_are_filled_from_the_view_and_written_again():
    ss = {keys.LAST: Controls(word="bank", weights=(1.0, 0.0, 0.0), k=4), keys.weight_key(1): 2.0}
    ss[keys.K] = 7
    widgets.remember(ss)
    del ss[keys.K]  # forgotten while the Layers page was shown
    widgets.init_widgets(ss, 3)
    assert ss[keys.K] == 7  # the kept value, not the view's
    assert [ss[keys.weight_key(j)] for j in range(3)] == [1.0, 2.0, 0.0]  # present values win over the view's
    assert ss[keys.WORD] == "bank" and ss[keys.GAMMA] == 1.0


@pytest.mark.parametrize(
    "weights, says, sliders",
    [
        (
            (1.0, 2.0, 3.0, 4.0, 5.0),
            "5 layer weights (w), but this model has 3 layers: cut to 1, 2, 3.",
            [1.0, 2.0, 3.0],
        ),
        ((1.0,), "1 layer weight (w), but this model has 3 layers: padded with zeros to 1, 0, 0.", [1.0, 0.0, 0.0]),
        ((1.0, 2.0, 3.0), None, [1.0, 2.0, 3.0]),
    ],
)
def test_a_links_weights_for_another_number_of_layers_get_a_note(weights, says, sliders):
    """Checked where the model is known (``init_widgets``): the link itself does not say which model made it."""
    ss = {keys.LAST: Controls(word="bank", weights=weights)}
    widgets.init_widgets(ss, 3)
    assert [ss[keys.weight_key(j)] for j in range(3)] == sliders
    assert ss.get(keys.LINK_NOTES, []) == ([f"The link gives {says}"] if says else [])
    widgets.init_widgets(ss, 3)  # a later run: the sliders exist, no second note
    assert len(ss.get(keys.LINK_NOTES, [])) == (1 if says else 0)


def test_the_query_occurrence_and_the_links_note():
    ss = {keys.QUERY: 2}
    assert widgets.query_of(ss, 5) == (2, "")
    ss = {keys.QUERY: 9, keys.LINK_QUERY: 9}  # a link's #10 among 5 occurrences
    assert widgets.query_of(ss, 5) == (0, "The link's query occurrence #10 does not exist (there are 5); showing #1.")
    assert keys.LINK_QUERY not in ss and widgets.query_of(ss, 5) == (0, "")  # said once
    assert widgets.query_of({keys.QUERY: "x"}, 3) == (0, "")  # not the link's: no note


@pytest.mark.parametrize(
    "selection, expected",
    [
        ({"selection": {"pick": [{"idx": 2}]}}, 2),  # the Vega-Lite map's point selection (app.render.map_spec.PICK)
        ({"selection": {"pick": [{"idx": -1}, {"idx": 1}]}}, 1),
        ({"selection": {"pick": [{"idx": 7}]}}, None),  # out of range
        ({"selection": {"pick": [{"idx": "<b>"}]}}, None),  # hostile
        ({"selection": {"pick": [{"vgsid_": 2}]}}, None),
        ({"selection": {"pick": []}}, None),
        ({"selection": {"pick": {}}}, None),
        ({"selection": {"points": [{"customdata": [1]}]}}, None),
        ({"selection": "nonsense"}, None),
        (None, None),
        ({}, None),
    ],
)
def test_a_click_on_the_map(selection, expected):
    assert widgets.clicked_occurrence(selection, 5) == expected


def test_the_controls_come_from_the_widgets():
    ss = {
        **widgets.widget_values(
            Controls(weights=(1.0, 0.0, -1.0), gamma=2.0, k=4, same_word=True, projection="tsne", n_clusters=3), 3
        ),
        keys.MAP_CHART: {"selection": {"pick": [{"idx": 1}]}},
    }
    controls = widgets.controls_of(ss, 3)
    assert controls == Controls(
        weights=(1.0, 0.0, -1.0), gamma=2.0, projection="tsne", k=4, same_word=True, n_clusters=3
    )
    assert widgets.map_click(ss, 4) == 1 and widgets.map_click(ss, 1) is None  # the click is no control
    ss[keys.N_CLUSTERS] = "3"  # not a number of clusters: chosen by silhouette
    assert widgets.controls_of(ss, 3).n_clusters == 0


def test_colour_by_offers_what_means_something_here():
    ss = {keys.COLOR_BY: "spelling"}
    assert widgets.color_by_choices(ss, True, False, True) == ["label", "sentence", "cluster"]
    assert ss[keys.COLOR_BY] == "label"  # one spelling: the remembered choice goes
    ss[keys.COLOR_BY] = "cluster"
    assert widgets.color_by_choices(ss, False, True, True) == ["sentence", "spelling", "cluster"]
    assert ss[keys.COLOR_BY] == "cluster"


def test_colour_goes_to_label_when_a_labelled_set_comes_in():
    """Issue 29: colour-by stayed on "sentence" after a labelled set replaced an unlabelled one."""
    bank = ["river", "money", "river", None]
    ss = {keys.COLOR_BY: "sentence"}  # the link's (or the default's) choice on the session's first frame
    widgets.color_by_choices(ss, True, False, True, label_set=bank)
    assert ss[keys.COLOR_BY] == "sentence" and ss[keys.COLOR_SET] == ("money", "river")  # the link decides
    ss[keys.COLOR_BY] = "label"
    widgets.color_by_choices(ss, False, False, False, label_set=[None, None])  # typed sentences without labels
    assert ss[keys.COLOR_BY] == "sentence"  # no labels: the first choice that means something
    widgets.color_by_choices(ss, True, False, True, label_set=bank)  # the "bank" example replaces them
    assert ss[keys.COLOR_BY] == "label"
    ss[keys.COLOR_BY] = "cluster"  # the user's choice for this set ...
    widgets.color_by_choices(ss, True, False, True, label_set=bank + ["money"])  # ... stays while they edit it
    assert ss[keys.COLOR_BY] == "cluster"
    widgets.color_by_choices(ss, True, True, True, label_set=["season", "water", "coil"])  # another labelled set
    assert ss[keys.COLOR_BY] == "label"
    ss[keys.COLOR_BY] = "spelling"
    widgets.color_by_choices(ss, True, True, False, label_set=["season", "water"])  # a label typed away: new set
    assert ss[keys.COLOR_BY] == "label"
    ss[keys.COLOR_BY] = "sentence"
    assert widgets.color_by_choices(ss, True, False, True) == ["label", "sentence", "cluster"]  # untracked: kept
    assert ss[keys.COLOR_BY] == "sentence"


def test_the_compare_tab_opens_on_the_page_model_and_the_next_one():
    specs = ["startup", "bundled:default", "bundled:lm-only"]
    ss = {}
    widgets.default_comparison(ss, specs, "bundled:default")
    assert (ss[keys.COMPARE_A], ss[keys.COMPARE_B]) == ("bundled:default", "startup")
    ss = {}
    widgets.default_comparison(ss, specs, "session")  # not offered (any more): the first two
    assert (ss[keys.COMPARE_A], ss[keys.COMPARE_B]) == ("startup", "bundled:default")
    ss = {keys.COMPARE_B: "bundled:lm-only"}  # one already picked (a link, the user): left alone
    widgets.default_comparison(ss, specs, "bundled:default")
    assert keys.COMPARE_A not in ss and ss[keys.COMPARE_B] == "bundled:lm-only"
    ss = {}
    widgets.default_comparison(ss, ["bundled:default"], "bundled:default")  # nothing to compare with
    assert ss == {}


def test_compare_models_that_went_away_are_forgotten():
    ss = {keys.COMPARE_A: "session", keys.COMPARE_B: "bundled:default"}
    widgets.drop_unknown_models(ss, ["bundled:default", "bundled:lm-only"])
    assert keys.COMPARE_A not in ss and ss[keys.COMPARE_B] == "bundled:default"
    tables = {}
    for model in ("a", "b", "c"):
        widgets.keep_comparison_table(tables, (model, ("s",)), model.upper())
    assert widgets.comparison_table(tables, ("c", ("s",))) == "C"
    assert widgets.comparison_table(tables, ("a", ("s",))) is None  # at most the two sides are kept
    widgets.keep_comparison_table(tables, ("a", ("other",)), "A2")  # other sentences: the old tables go
    assert list(tables[keys.private("compare_tables")]) == [("a", ("other",))]


def test_the_word_box_holds_a_word_of_the_sentences():
    lines = inputs.parse_input("The bank closed .\nA bank of the river .\nSpring came .").lines
    counts = dict(inputs.word_counts(lines, True))
    ss = {keys.WORD: "Bank", keys.SENTENCES: "x"}
    assert widgets.pick_word(ss, counts, lines, True) == "" and ss[keys.WORD] == "bank"
    exact = dict(inputs.word_counts(lines, False))
    ss = {keys.WORD: "spring", keys.SENTENCES: "x"}
    assert widgets.pick_word(ss, exact, lines, False) == "" and ss[keys.WORD] == "Spring"  # its spelling here
    ss = {keys.WORD: "<b>bat</b>", keys.SENTENCES: "x"}  # a link's word that is not there
    note = widgets.pick_word(ss, counts, lines, True)
    assert ss[keys.WORD] == "bank" and "does not occur in these sentences" in note and "<b>" not in note
    ss[keys.WORD] = "bat"
    assert widgets.pick_word(ss, counts, lines, True) == "" and ss[keys.WORD] == "bank"  # a later text: no note
    # a word whose invisible characters the sentences do not lose: the note shows them, not a second "bank"
    for asked, quoted in [("ba\u200bnk", "ba\\u200bnk"), ("ba\tnk", "ba\\tnk")]:
        ss = {keys.WORD: asked, keys.SENTENCES: "x"}
        note = widgets.pick_word(ss, counts, lines, True)
        assert shown(note) == (
            f"The link's word “{quoted}” does not occur in these sentences; showing “bank”, "
            "the most frequent word here."
        )


def test_a_link_with_thousands_of_weights_says_so_once():
    view, notes = link.from_query({"ex": "bank", "w": ",".join(["1"] * 5000)}, EXAMPLES, MODELS)
    assert len(view.weights) == keys.MAX_LINK_WEIGHTS and notes == []  # said with the model's layers, below
    ss = {keys.LAST: view}
    widgets.init_widgets(ss, 3)
    assert ss[keys.LINK_NOTES] == [
        f"The link gives {keys.MAX_LINK_WEIGHTS} or more layer weights (w), but this "
        "model has 3 layers: cut to 1, 1, 1."
    ]
    ss = {keys.LAST: link.from_query({"ex": "bank", "w": "1,2,3,4"}, EXAMPLES, MODELS)[0]}
    widgets.init_widgets(ss, 3)
    assert ss[keys.LINK_NOTES] == ["The link gives 4 layer weights (w), but this model has 3 layers: cut to 1, 2, 3."]


def test_apply_weights_updates_sliders_and_view():
    state = {keys.LAST: Controls(sentences="x", weights=(0.0, 0.0, 0.0)), keys.weight_key(0): 1.0}
    w = widgets.apply_weights(state, [0.1, 0.6, 0.3], 3)
    assert [state[keys.weight_key(j)] for j in range(3)] == w and state[keys.LAST].weights == tuple(w)
    assert state[keys.LAST].sentences == "x"
    with pytest.raises(ValueError, match="2 layers; the model has 3"):
        widgets.apply_weights({}, [0.5, 0.5], 3)
