"""app.session.state: the explorer's session keys, the link (URL round trip, hostile values), the weight sliders' one
writer, and the controls that outlive a page switch."""
from __future__ import annotations

import dataclasses
import urllib.parse

import pytest

from app.explore import inputs, mixing
from app.session import state
from app.explore.examples import EXAMPLE_SETS
from app.explore.frame import Controls
from app.render.safe import shown

EXAMPLES = {name: e.text for name, e in EXAMPLE_SETS.items()}
MODELS = ("default", "lm-only")


def round_trip(view: state.View) -> tuple[state.View, list[str]]:
    """Through a real URL: encoded, then parsed back the way a browser and Streamlit hand it over."""
    url = "http://host/?" + urllib.parse.urlencode(state.view_to_query(view))
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True))
    return state.view_from_query(params, EXAMPLES, MODELS)


def test_every_control_goes_through_the_link_and_back():
    view = state.View(text=EXAMPLES["bank"], example="bank", word="bank", weights=(1.0, -0.5, 0.0), gamma=2.0,
                      layer_norm=True, projection="tsne", inflections=True, context=True, fold_case=False, query=7,
                      k=4, same_word=False, color_by="sentence", tab="neighbours", model="lm-only", present=True,
                      map_view="layers", clusters=3, compare=("lm-only", "default"))
    assert state.view_to_query(view) == {
        "ex": "bank", "word": "bank", "w": "1,-0.5,0", "g": "2", "ln": "1", "proj": "tsne", "infl": "1", "ctx": "1",
        "case": "exact", "q": "8", "k": "4", "same": "0", "color": "sentence", "tab": "neighbours",
        "model": "lm-only", "present": "1", "show": "layers", "clusters": "3",
        "compare": "lm-only,default"}  # q counts from 1, as the page does
    assert round_trip(view) == (view, [])
    # every field of View is in the link: changing any one of them changes the query
    changed = {"text": "a bank\nthe bank", "example": None, "word": "river", "weights": (0.5, 0.0, 0.0), "gamma": 1.5,
               "layer_norm": False, "projection": "pca", "inflections": False, "context": False, "fold_case": True,
               "query": 1, "k": 11, "same_word": True, "color_by": "label", "tab": "export", "model": "default",
               "present": False, "map_view": "mix", "clusters": 0, "compare": ()}
    assert set(changed) == {f.name for f in dataclasses.fields(state.View)}
    for name, value in changed.items():
        other = dataclasses.replace(view, **{name: value})
        if name in ("text", "example"):  # the text is an example set's or typed, never both
            other = dataclasses.replace(other, example=None, text=value if name == "text" else "typed text")
        assert state.view_to_query(other) != state.view_to_query(view), name
        assert round_trip(other) == (other, []), name


def test_typed_text_and_defaults():
    custom = state.View(text="[a] one bank\n[b] two bank & <b>x</b>", word="bank")
    assert state.view_to_query(custom) == {"s": custom.text, "word": "bank"}
    assert round_trip(custom) == (custom, [])
    assert state.view_to_query(state.View()) == {} and state.view_from_query({}) == (state.View(), [])
    long = state.View(text="x" * (state.MAX_URL_TEXT + 1))
    assert "s" not in state.view_to_query(long) and not state.text_fits_link(long)
    assert state.text_fits_link(state.View(text="x" * state.MAX_URL_TEXT)) and state.text_fits_link(state.View())
    assert state.text_fits_link(dataclasses.replace(long, example="bank"))


@pytest.mark.parametrize("params, expected, says", [
    ({"w": "1,nan"}, {}, "not a list of finite numbers"),
    ({"w": "abc"}, {}, "not a list of finite numbers"),
    ({"w": "99,-99,0"}, {"weights": (5.0, -5.0, 0.0)}, "clamped to 5, -5, 0"),
    ({"g": "lots"}, {}, "is not a number"),
    ({"g": "inf"}, {}, "not a finite number"),
    ({"g": "100"}, {"gamma": 3.0}, "outside 0.1 to 3; using 3"),
    ({"k": "500"}, {"k": 50}, "outside 1 to 50; using 50"),
    ({"k": "0"}, {"k": 1}, "using 1"),
    ({"k": "2.5"}, {}, "is not a whole number"),
    ({"q": "-3"}, {}, "outside 1 to"),
    ({"q": "99999999"}, {"query": 0}, "query occurrence #99,999,999 is outside 1 to 1,000,000; using 1."),
    ({"k": "1" + "0" * 5000}, {}, "is too large; using"),
    ({"g": "1e400"}, {}, "is too large; using 1"),
    ({"g": "3.0000001"}, {"gamma": 3.0}, "The link's γ '3.0000001' is outside 0.1 to 3; using 3."),
    ({"clusters": "1e23"}, {"clusters": 6}, "is outside 0 (chosen by silhouette) to 6; using 6"),
    ({"clusters": "two"}, {"clusters": 0}, "is not a number; using 0 (chosen by silhouette)."),
    ({"proj": "<script>alert(1)</script>"}, {}, "unknown projection '<script>"),
    ({"tab": "secret"}, {}, "unknown tab 'secret'"),
    ({"color": "red"}, {}, "unknown colour-by 'red'"),
    ({"model": "../../etc/passwd"}, {}, "unknown model '../../etc/passwd'; the models here are default, lm-only"),
    ({"ex": "nope"}, {}, "unknown example set 'nope'"),
    ({"ln": "yes"}, {}, "ln='yes' is neither 1 nor 0"),
    ({"case": "upper"}, {}, "is neither exact nor fold"),
    ({"word": "w" * 101}, {}, "longer than 100 characters"),
    ({"zzz": "1"}, {}, "does not know ('zzz')"),
])
def test_hostile_values_are_clamped_or_ignored_with_a_note(params, expected, says):
    view, notes = state.view_from_query(params, EXAMPLES, MODELS)
    assert view == dataclasses.replace(state.View(), **expected)
    assert len(notes) == 1 and says in notes[0], notes


def test_a_links_cr_and_crlf_are_line_breaks_and_unknown_parameters_are_counted():
    view, notes = state.view_from_query({"s": "[a] one bank\r[b] two bank\r\nthree bank"})
    assert view.text == "[a] one bank\n[b] two bank\nthree bank" and notes == []  # what the box shows and parses
    assert state.view_from_query({"s": "a bank\nb bank"})[0].text == "a bank\nb bank"  # LF text as it came
    _, notes = state.view_from_query({f"p{i}": "1" for i in range(9)})
    assert notes == ["The link has parameters this explorer does not know ('p0', 'p1', 'p2', 'p3', 'p4' and 4 more); "
                     "ignored."]


def test_a_hostile_link_keeps_what_is_valid():
    view, notes = state.view_from_query({"ex": "bank", "word": "bank", "w": "x", "k": "7", "g": "1e400"}, EXAMPLES)
    assert (view.example, view.word, view.k, view.weights, view.gamma) == ("bank", "bank", 7, (), 1.0)
    assert len(notes) == 2
    huge, notes = state.view_from_query({"s": "a" * (inputs.MAX_TEXT_CHARS + 10)})
    assert len(huge.text) == inputs.MAX_TEXT_CHARS and "longer than" in notes[0]


def test_a_links_word_with_invisible_characters_says_so():
    params = dict(urllib.parse.parse_qsl("ex=bank&word=ba%E2%80%8Bnk"))  # a zero-width space inside "bank"
    assert params["word"] == "ba\u200bnk"
    view, notes = state.view_from_query(params, EXAMPLES, MODELS)
    assert view.word == "bank"  # the sentences lose it too (elmo_core.data.text.clean_line), so the word matches
    assert notes == ["The link's word 'ba\\u200bnk' contains invisible characters (U+200B), which the explorer also "
                     "removes from sentences; looking for 'bank'."]
    view, notes = state.view_from_query({"ex": "bank", "word": "\ufeff\u200d"}, EXAMPLES, MODELS)
    assert view.word == "" and notes == ["The link's word '\\ufeff\\u200d' has only invisible characters "
                                         "(U+FEFF, U+200D); ignored."]


def test_session_start_reads_the_link_once():
    ss: dict = {}
    default = state.View(text="t", word="t")
    state.start_session(ss, {"model": "lm-only", "present": "1", "q": "3", "k": "x"}, EXAMPLES, MODELS, "pick", default)
    assert ss["pick"] == "lm-only" and ss[state.PRESENT] is True and ss[state.LINK_QUERY] == 2
    assert ss[state.VIEW].query == 2 and len(ss[state.LINK_NOTES]) == 1
    state.start_session(ss, {"model": "default"}, EXAMPLES, MODELS, "pick", default)  # a later run: unchanged
    assert ss["pick"] == "lm-only"
    fresh: dict = {}
    state.start_session(fresh, {}, EXAMPLES, MODELS, "pick", default)
    assert fresh[state.VIEW] == default and "pick" not in fresh and fresh[state.LINK_NOTES] == []
    # A link with controls but no sentences (the projector's ?present=1) opens on the default example, not empty.
    bank = state.View(text=EXAMPLES["bank"], example="bank", word="bank")
    projector: dict = {}
    state.start_session(projector, {"present": "1", "k": "4"}, EXAMPLES, MODELS, "pick", bank)
    view = projector[state.VIEW]
    assert (view.text, view.example, view.word, view.k, view.present) == (EXAMPLES["bank"], "bank", "bank", 4, True)
    assert projector[state.LINK_NOTES] == []
    assert state.clamp_query(20, 12) == (0, "The link's query occurrence #21 does not exist (there are 12); showing #1.")
    assert state.clamp_query(3, 12) == (3, "")


def test_a_link_names_a_published_model_and_a_server_without_it_says_so():
    """model= carries a named model: bundled, or published when the opening server has it in its cache; one
    that the server knows but has not downloaded gets the reason (with the operator's command), any other name
    the list; a server started on another model writes model= in every link, model=default too."""
    models = ("default", "lm-only", "small")
    missing = {"original": "is not downloaded on this server (the operator can run: python -m elmo_core download "
                           "original)"}
    assert state.view_from_query({"model": "small"}, EXAMPLES, models, missing) == (state.View(model="small"), [])
    view, notes = state.view_from_query({"model": "original"}, EXAMPLES, models, missing)
    assert view.model == "default" and notes == [
        "The link asks for the model 'original', which is not downloaded on this server (the operator can run: "
        "python -m elmo_core download original). Using default."]
    view, notes = state.view_from_query({"model": "<b>x</b>"}, EXAMPLES, models, missing, default_model="small")
    assert view.model == "small" and notes == ["The link asks for an unknown model '<b>x</b>'; the models here are "
                                               "default, lm-only, small. Using small."]
    assert state.view_from_query({}, EXAMPLES, models, missing, default_model="small")[0].model == "small"
    assert state.view_to_query(state.View(model="small")) == {"model": "small"}
    assert state.view_to_query(state.View(model="default")) == {}
    assert state.view_to_query(state.View(model="default"), startup_model="small") == {"model": "default"}
    assert state.view_to_query(state.View(model="small"), startup_model="small") == {"model": "small"}
    # a session's start: the link's model, else the startup model's name (the radio's value)
    on_small = state.View(text="t", word="t", model="small")
    for params, picked, n_notes in [({}, "small", 0), ({"model": "default"}, "default", 0),
                                    ({"model": "original"}, "small", 1), ({"model": "lm-only"}, "lm-only", 0)]:
        ss: dict = {}
        state.start_session(ss, params, EXAMPLES, models, "pick", on_small, missing)
        assert ss["pick"] == picked and len(ss[state.LINK_NOTES]) == n_notes, params


def test_the_new_views_controls_in_the_link_and_the_widgets():
    view, notes = state.view_from_query({"show": "layers", "clusters": "4", "compare": "default,lm-only",
                                         "tab": "compare", "color": "cluster"}, EXAMPLES, MODELS)
    assert (view.map_view, view.clusters, view.compare, view.tab, view.color_by) == (
        "layers", 4, ("default", "lm-only"), "compare", "cluster") and notes == []
    values = state.widget_defaults(view, 3)
    assert values[state.MAP_VIEW] == "layers side by side" and values[state.N_CLUSTERS] == 4
    assert (values[state.COMPARE_A], values[state.COMPARE_B]) == ("bundled:default", "bundled:lm-only")
    assert state.view_of(values, 3, None, "default").compare == ("default", "lm-only")
    # an uploaded model on one side cannot travel: the comparison is left out of the link
    values[state.COMPARE_B] = "session"
    assert state.view_of(values, 3, None, "default").compare == ()
    for params, says in (({"clusters": "1"}, "at least 2"), ({"clusters": "99"}, "outside 0 (chosen by silhouette) to 6"),
                         ({"compare": "default,default"}, "not two different"), ({"compare": "x,y"}, "not two"),
                         ({"show": "<b>"}, "unknown map view")):
        view, notes = state.view_from_query(params, EXAMPLES, MODELS)
        assert view.clusters in (0, 6) and view.compare == () and view.map_view == "mix", params
        assert any(says in n for n in notes), (params, notes)
    assert {state.MAP_VIEW, state.N_CLUSTERS, state.COMPARE_A, state.COMPARE_B} <= set(state.KEPT)


def test_widgets_and_view_agree():
    view = state.View(text="a", word="bank", weights=(1.0, 2.0), k=3, tab="similarity", query=2, fold_case=False)
    values = state.widget_defaults(view, 3)
    assert [values[state.weight_key(j)] for j in range(3)] == [1.0, 2.0, 0.0]  # a link made with another model
    assert values[state.TAB] == state.TABS["similarity"] and values[state.K] == 3
    assert all(k.startswith(state.PREFIX) for k in values)
    back = state.view_of(values, 3, None, "default")
    assert back == dataclasses.replace(view, weights=(1.0, 2.0, 0.0))


def test_set_layer_weights_sets_sliders_and_the_remembered_view():
    ss = {state.VIEW: state.View(text="x", weights=(0.0, 0.0, 0.0))}
    assert state.set_layer_weights(ss, [1.0, -9.0, 2.5]) == (1.0, -5.0, 2.5)  # clipped to the slider range
    assert [ss[state.weight_key(j)] for j in range(3)] == [1.0, -5.0, 2.5]
    assert ss[state.VIEW].weights == (1.0, -5.0, 2.5) and ss[state.VIEW].text == "x"
    assert state.set_preset({}, "top", 3) == mixing.preset_weights("top", 3)


def test_kept_controls_come_back_only_when_forgotten():
    ss = {state.K: 7, state.SAME_WORD: True, state.QUERY: 3, state.COLOR_BY: "sentence",
          state.TAB: "Export", state.MAP_VIEW: "layers side by side", state.N_CLUSTERS: 3,
          state.COMPARE_A: "bundled:default", state.COMPARE_B: "bundled:lm-only", "other": 1}
    state.remember(ss)
    for key in state.KEPT:
        del ss[key]  # what Streamlit does to widgets that were not drawn
    ss[state.K] = 9  # set anew meanwhile: not overwritten
    state.restore(ss)
    assert (ss[state.K], ss[state.SAME_WORD], ss[state.QUERY], ss[state.COLOR_BY], ss[state.TAB]) == (
        9, True, 3, "sentence", "Export")
    assert (ss[state.MAP_VIEW], ss[state.N_CLUSTERS], ss[state.COMPARE_A], ss[state.COMPARE_B]) == (
        "layers side by side", 3, "bundled:default", "bundled:lm-only")


# ---- what the explorer page reads from its widgets --------------------------------------------------------------
def test_widgets_are_filled_from_the_view_and_written_again():
    ss = {state.VIEW: state.View(word="bank", weights=(1.0, 0.0, 0.0), k=4), state.weight_key(1): 2.0}
    ss[state.K] = 7
    state.remember(ss)
    del ss[state.K]  # forgotten while the Layers page was shown
    state.init_widgets(ss, 3)
    assert ss[state.K] == 7  # the kept value, not the view's
    assert [ss[state.weight_key(j)] for j in range(3)] == [1.0, 2.0, 0.0]  # present values win over the view's
    assert ss[state.WORD] == "bank" and ss[state.GAMMA] == 1.0


@pytest.mark.parametrize("weights, says, sliders", [
    ((1.0, 2.0, 3.0, 4.0, 5.0), "5 layer weights (w), but this model has 3 layers: cut to 1, 2, 3.", [1.0, 2.0, 3.0]),
    ((1.0,), "1 layer weight (w), but this model has 3 layers: padded with zeros to 1, 0, 0.", [1.0, 0.0, 0.0]),
    ((1.0, 2.0, 3.0), None, [1.0, 2.0, 3.0]),
])
def test_a_links_weights_for_another_number_of_layers_get_a_note(weights, says, sliders):
    """Checked where the model is known (``init_widgets``): the link itself does not say which model made it."""
    ss = {state.VIEW: state.View(word="bank", weights=weights)}
    state.init_widgets(ss, 3)
    assert [ss[state.weight_key(j)] for j in range(3)] == sliders
    assert ss.get(state.LINK_NOTES, []) == ([f"The link gives {says}"] if says else [])
    state.init_widgets(ss, 3)  # a later run: the sliders exist, no second note
    assert len(ss.get(state.LINK_NOTES, [])) == (1 if says else 0)


def test_the_query_occurrence_and_the_links_note():
    ss = {state.QUERY: 2}
    assert state.query_of(ss, 5) == (2, "")
    ss = {state.QUERY: 9, state.LINK_QUERY: 9}  # a link's #10 among 5 occurrences
    assert state.query_of(ss, 5) == (0, "The link's query occurrence #10 does not exist (there are 5); showing #1.")
    assert state.LINK_QUERY not in ss and state.query_of(ss, 5) == (0, "")  # said once
    assert state.query_of({state.QUERY: "x"}, 3) == (0, "")  # not the link's: no note


@pytest.mark.parametrize("selection, expected", [
    ({"selection": {"pick": [{"idx": 2}]}}, 2),  # the Vega-Lite map's point selection (app.render.map_chart.PICK)
    ({"selection": {"pick": [{"idx": -1}, {"idx": 1}]}}, 1),
    ({"selection": {"pick": [{"idx": 7}]}}, None),  # out of range
    ({"selection": {"pick": [{"idx": "<b>"}]}}, None),  # hostile
    ({"selection": {"pick": [{"vgsid_": 2}]}}, None), ({"selection": {"pick": []}}, None),
    ({"selection": {"pick": {}}}, None), ({"selection": {"points": [{"customdata": [1]}]}}, None),
    ({"selection": "nonsense"}, None), (None, None), ({}, None)])
def test_a_click_on_the_map(selection, expected):
    assert state.clicked_occurrence(selection, 5) == expected


def test_the_controls_come_from_the_widgets():
    ss = {**state.widget_defaults(state.View(weights=(1.0, 0.0, -1.0), gamma=2.0, k=4, same_word=True,
                                             projection="tsne", clusters=3), 3),
          state.MAP_CHART: {"selection": {"pick": [{"idx": 1}]}}}
    controls = state.controls_of(ss, 3, query=2, n=4)
    assert controls == Controls((1.0, 0.0, -1.0), 2.0, False, "tsne", False, 2, 1, 4, True, False, True, 3)
    ss[state.N_CLUSTERS] = "3"  # not a number of clusters: chosen by silhouette
    assert state.controls_of(ss, 3, 0, 4).n_clusters == 0


def test_colour_by_offers_what_means_something_here():
    ss = {state.COLOR_BY: "spelling"}
    assert state.color_by_choices(ss, True, False, True) == ["label", "sentence", "cluster"]
    assert ss[state.COLOR_BY] == "label"  # one spelling: the remembered choice goes
    ss[state.COLOR_BY] = "cluster"
    assert state.color_by_choices(ss, False, True, True) == ["sentence", "spelling", "cluster"]
    assert ss[state.COLOR_BY] == "cluster"


def test_colour_goes_to_label_when_a_labelled_set_comes_in():
    """Issue 29: colour-by stayed on "sentence" after a labelled set replaced an unlabelled one."""
    bank = ["river", "money", "river", None]
    ss = {state.COLOR_BY: "sentence"}  # the link's (or the default's) choice on the session's first frame
    state.color_by_choices(ss, True, False, True, label_set=bank)
    assert ss[state.COLOR_BY] == "sentence" and ss[state.COLOR_SET] == ("money", "river")  # the link decides
    ss[state.COLOR_BY] = "label"
    state.color_by_choices(ss, False, False, False, label_set=[None, None])  # typed sentences without labels
    assert ss[state.COLOR_BY] == "sentence"  # no labels: the first choice that means something
    state.color_by_choices(ss, True, False, True, label_set=bank)  # the "bank" example replaces them
    assert ss[state.COLOR_BY] == "label"
    ss[state.COLOR_BY] = "cluster"  # the user's choice for this set ...
    state.color_by_choices(ss, True, False, True, label_set=bank + ["money"])  # ... stays while they edit it
    assert ss[state.COLOR_BY] == "cluster"
    state.color_by_choices(ss, True, True, True, label_set=["season", "water", "coil"])  # another labelled set
    assert ss[state.COLOR_BY] == "label"
    ss[state.COLOR_BY] = "spelling"
    state.color_by_choices(ss, True, True, False, label_set=["season", "water"])  # a label typed away: new set
    assert ss[state.COLOR_BY] == "label"
    ss[state.COLOR_BY] = "sentence"
    assert state.color_by_choices(ss, True, False, True) == ["label", "sentence", "cluster"]  # untracked: kept
    assert ss[state.COLOR_BY] == "sentence"


def test_the_compare_tab_opens_on_the_page_model_and_the_next_one():
    specs = ["startup", "bundled:default", "bundled:lm-only"]
    ss = {}
    state.default_comparison(ss, specs, "bundled:default")
    assert (ss[state.COMPARE_A], ss[state.COMPARE_B]) == ("bundled:default", "startup")
    ss = {}
    state.default_comparison(ss, specs, "session")  # not offered (any more): the first two
    assert (ss[state.COMPARE_A], ss[state.COMPARE_B]) == ("startup", "bundled:default")
    ss = {state.COMPARE_B: "bundled:lm-only"}  # one already picked (a link, the user): left alone
    state.default_comparison(ss, specs, "bundled:default")
    assert state.COMPARE_A not in ss and ss[state.COMPARE_B] == "bundled:lm-only"
    ss = {}
    state.default_comparison(ss, ["bundled:default"], "bundled:default")  # nothing to compare with
    assert ss == {}


def test_compare_models_that_went_away_are_forgotten():
    ss = {state.COMPARE_A: "session", state.COMPARE_B: "bundled:default"}
    state.drop_unknown_models(ss, ["bundled:default", "bundled:lm-only"])
    assert state.COMPARE_A not in ss and ss[state.COMPARE_B] == "bundled:default"
    tables = {}
    for model in ("a", "b", "c"):
        state.keep_comparison_table(tables, (model, ("s",)), model.upper())
    assert state.comparison_table(tables, ("c", ("s",))) == "C"
    assert state.comparison_table(tables, ("a", ("s",))) is None  # at most the two sides are kept
    state.keep_comparison_table(tables, ("a", ("other",)), "A2")  # other sentences: the old tables go
    assert list(tables[state.private("compare_tables")]) == [("a", ("other",))]


def test_the_word_box_holds_a_word_of_the_sentences():
    lines = inputs.parse_input("The bank closed .\nA bank of the river .\nSpring came .").lines
    counts = dict(inputs.word_counts(lines, True))
    ss = {state.WORD: "Bank", state.SENTENCES: "x"}
    assert state.pick_word(ss, counts, lines, True) == "" and ss[state.WORD] == "bank"
    exact = dict(inputs.word_counts(lines, False))
    ss = {state.WORD: "spring", state.SENTENCES: "x"}
    assert state.pick_word(ss, exact, lines, False) == "" and ss[state.WORD] == "Spring"  # its spelling here
    ss = {state.WORD: "<b>bat</b>", state.SENTENCES: "x"}  # a link's word that is not there
    note = state.pick_word(ss, counts, lines, True)
    assert ss[state.WORD] == "bank" and "does not occur in these sentences" in note and "<b>" not in note
    ss[state.WORD] = "bat"
    assert state.pick_word(ss, counts, lines, True) == "" and ss[state.WORD] == "bank"  # a later text: no note
    # a word whose invisible characters the sentences do not lose: the note shows them, not a second "bank"
    for asked, quoted in [("ba\u200bnk", "ba\\u200bnk"), ("ba\tnk", "ba\\tnk")]:
        ss = {state.WORD: asked, state.SENTENCES: "x"}
        note = state.pick_word(ss, counts, lines, True)
        assert shown(note) == (f"The link's word “{quoted}” does not occur in these sentences; showing “bank”, "
                               "the most frequent word here.")


def test_what_a_link_cannot_carry():
    view = state.View(text="x" * (inputs.MAX_URL_TEXT + 1), model="default")
    notes = state.link_notes(view, "upload:abc", "my **model**", {state.COMPARE_A: "session"})
    assert len(notes) == 3 and "“my \\*\\*model\\*\\*”" in notes[0] and "sees the “default” model" in notes[0]
    assert "not bundled" in notes[1] and "too long to keep in the link" in notes[2]
    assert state.link_notes(state.View(text="short"), "default", "default", {}) == []


@pytest.mark.parametrize("query, expected, note", [
    ({"k": "4.0"}, ("k", 4), None),  # a whole number written as a float is that number
    ({"k": "1e3"}, ("k", 50), "The link's k (neighbours) '1e3' is outside 1 to 50; using 50."),
])
def test_whole_numbers_written_as_floats(query, expected, note):
    view, notes = state.view_from_query({"ex": "bank", **query}, EXAMPLES, MODELS)
    assert getattr(view, expected[0]) == expected[1]
    assert notes == ([note] if note else [])


def test_a_link_with_an_example_set_and_sentences_says_which_it_shows():
    view, notes = state.view_from_query({"ex": "bank", "s": "[a] The bank is here.", "word": "bank"}, EXAMPLES, MODELS)
    assert (view.example, view.text) == ("bank", EXAMPLES["bank"])
    assert notes == ["The link gives both an example set and sentences (s); it shows the example set 'bank' and "
                     "leaves the sentences out."]


def test_a_link_with_thousands_of_weights_says_so_once():
    view, notes = state.view_from_query({"ex": "bank", "w": ",".join(["1"] * 5000)}, EXAMPLES, MODELS)
    assert len(view.weights) == state.MAX_LINK_WEIGHTS and notes == []  # said with the model's layers, below
    ss = {state.VIEW: view}
    state.init_widgets(ss, 3)
    assert ss[state.LINK_NOTES] == [f"The link gives {state.MAX_LINK_WEIGHTS} or more layer weights (w), but this "
                                    "model has 3 layers: cut to 1, 1, 1."]
    ss = {state.VIEW: state.view_from_query({"ex": "bank", "w": "1,2,3,4"}, EXAMPLES, MODELS)[0]}
    state.init_widgets(ss, 3)
    assert ss[state.LINK_NOTES] == ["The link gives 4 layer weights (w), but this model has 3 layers: cut to 1, 2, 3."]
