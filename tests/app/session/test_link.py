"""app/session/link.py: the link's round trip of every control, hostile values, a session's start from a link,
what a link cannot carry."""

from __future__ import annotations

import dataclasses
import urllib.parse

import pytest

from app.explore import inputs
from app.explore.controls import Controls
from app.explore.examples import EXAMPLE_SETS
from app.session import keys, link

EXAMPLES = {name: e.text for name, e in EXAMPLE_SETS.items()}
MODELS = ("default", "lm-only")


def round_trip(view: Controls) -> tuple[Controls, list[str]]:
    """Through a real URL: encoded, then parsed back the way a browser and Streamlit hand it over."""
    url = "http://host/?" + urllib.parse.urlencode(link.to_query(view))
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True))
    return link.from_query(params, EXAMPLES, MODELS)


def test_every_control_goes_through_the_link_and_back():
    view = Controls(
        sentences=EXAMPLES["bank"],
        example="bank",
        word="bank",
        weights=(1.0, -0.5, 0.0),
        gamma=2.0,
        layer_norm=True,
        projection="tsne",
        inflections=True,
        context=True,
        fold_case=False,
        query=7,
        k=4,
        same_word=False,
        color_by="sentence",
        tab="neighbours",
        model="lm-only",
        present=True,
        map_view="layers",
        n_clusters=3,
        compare=("lm-only", "default"),
    )
    assert link.to_query(view) == {
        "ex": "bank",
        "word": "bank",
        "w": "1,-0.5,0",
        "g": "2",
        "ln": "1",
        "proj": "tsne",
        "infl": "1",
        "ctx": "1",
        "case": "exact",
        "q": "8",
        "k": "4",
        "same": "0",
        "color": "sentence",
        "tab": "neighbours",
        "model": "lm-only",
        "present": "1",
        "show": "layers",
        "clusters": "3",
        "compare": "lm-only,default",
    }  # q counts from 1, as the page does
    assert round_trip(view) == (view, [])
    # every field of Controls is in the link: changing any one of them changes the query
    changed = {
        "sentences": "a bank\nthe bank",
        "example": None,
        "word": "river",
        "weights": (0.5, 0.0, 0.0),
        "gamma": 1.5,
        "layer_norm": False,
        "projection": "pca",
        "inflections": False,
        "context": False,
        "fold_case": True,
        "query": 1,
        "k": 11,
        "same_word": True,
        "color_by": "label",
        "tab": "export",
        "model": "default",
        "present": False,
        "map_view": "mix",
        "n_clusters": 0,
        "compare": (),
    }
    assert set(changed) == {f.name for f in dataclasses.fields(Controls)}
    for name, value in changed.items():
        other = dataclasses.replace(view, **{name: value})
        if name in ("sentences", "example"):  # the text is an example set's or typed, never both
            other = dataclasses.replace(other, example=None, sentences=value if name == "sentences" else "typed text")
        assert link.to_query(other) != link.to_query(view), name
        assert round_trip(other) == (other, []), name


def test_typed_text_and_defaults():
    custom = Controls(sentences="[a] one bank\n[b] two bank & <b>x</b>", word="bank")
    assert link.to_query(custom) == {"s": custom.sentences, "word": "bank"}
    assert round_trip(custom) == (custom, [])
    assert link.to_query(Controls()) == {} and link.from_query({}) == (Controls(), [])
    long = Controls(sentences="x" * (keys.MAX_URL_TEXT + 1))
    assert "s" not in link.to_query(long) and not link.text_fits_link(long)
    assert link.text_fits_link(Controls(sentences="x" * keys.MAX_URL_TEXT)) and link.text_fits_link(Controls())
    assert link.text_fits_link(dataclasses.replace(long, example="bank"))


@pytest.mark.parametrize(
    "params, expected, says",
    [
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
        ({"clusters": "1e23"}, {"n_clusters": 6}, "is outside 0 (chosen by silhouette) to 6; using 6"),
        ({"clusters": "two"}, {"n_clusters": 0}, "is not a number; using 0 (chosen by silhouette)."),
        ({"proj": "<script>alert(1)</script>"}, {}, "unknown projection '<script>"),
        ({"tab": "secret"}, {}, "unknown tab 'secret'"),
        ({"color": "red"}, {}, "unknown colour-by 'red'"),
        ({"model": "../../etc/passwd"}, {}, "unknown model '../../etc/passwd'; the models here are default, lm-only"),
        ({"ex": "nope"}, {}, "unknown example set 'nope'"),
        ({"ln": "yes"}, {}, "ln='yes' is neither 1 nor 0"),
        ({"case": "upper"}, {}, "is neither exact nor fold"),
        ({"word": "w" * 101}, {}, "longer than 100 characters"),
        ({"zzz": "1"}, {}, "does not know ('zzz')"),
    ],
)
def test_hostile_values_are_clamped_or_ignored_with_a_note(params, expected, says):
    view, notes = link.from_query(params, EXAMPLES, MODELS)
    assert view == dataclasses.replace(Controls(), **expected)
    assert len(notes) == 1 and says in notes[0], notes


def test_a_links_cr_and_crlf_are_line_breaks_and_unknown_parameters_are_counted():
    view, notes = link.from_query({"s": "[a] one bank\r[b] two bank\r\nthree bank"})
    assert view.sentences == "[a] one bank\n[b] two bank\nthree bank" and notes == []  # what the box shows and parses
    assert link.from_query({"s": "a bank\nb bank"})[0].sentences == "a bank\nb bank"  # LF text as it came
    _, notes = link.from_query({f"p{i}": "1" for i in range(9)})
    assert notes == [
        "The link has parameters this explorer does not know ('p0', 'p1', 'p2', 'p3', 'p4' and 4 more); ignored."
    ]


def test_a_hostile_link_keeps_what_is_valid():
    view, notes = link.from_query({"ex": "bank", "word": "bank", "w": "x", "k": "7", "g": "1e400"}, EXAMPLES)
    assert (view.example, view.word, view.k, view.weights, view.gamma) == ("bank", "bank", 7, (), 1.0)
    assert len(notes) == 2
    huge, notes = link.from_query({"s": "a" * (inputs.MAX_TEXT_CHARS + 10)})
    assert len(huge.sentences) == inputs.MAX_TEXT_CHARS and "longer than" in notes[0]


def test_a_links_word_with_invisible_characters_says_so():
    params = dict(urllib.parse.parse_qsl("ex=bank&word=ba%E2%80%8Bnk"))  # a zero-width space inside "bank"
    assert params["word"] == "ba\u200bnk"
    view, notes = link.from_query(params, EXAMPLES, MODELS)
    assert view.word == "bank"  # the sentences lose it too (elmo_core.data.text.clean_line), so the word matches
    assert notes == [
        "The link's word 'ba\\u200bnk' contains invisible characters (U+200B), which the explorer also "
        "removes from sentences; looking for 'bank'."
    ]
    view, notes = link.from_query({"ex": "bank", "word": "\ufeff\u200d"}, EXAMPLES, MODELS)
    assert view.word == "" and notes == [
        "The link's word '\\ufeff\\u200d' has only invisible characters (U+FEFF, U+200D); ignored."
    ]


def test_session_start_reads_the_link_once():
    ss: dict = {}
    default = Controls(sentences="t", word="t")
    link.start_session(ss, {"model": "lm-only", "present": "1", "q": "3", "k": "x"}, EXAMPLES, MODELS, "pick", default)
    assert ss["pick"] == "lm-only" and ss[keys.PRESENT] is True and ss[keys.LINK_QUERY] == 2
    assert ss[keys.LAST].query == 2 and len(ss[keys.LINK_NOTES]) == 1
    link.start_session(ss, {"model": "default"}, EXAMPLES, MODELS, "pick", default)  # a later run: unchanged
    assert ss["pick"] == "lm-only"
    fresh: dict = {}
    link.start_session(fresh, {}, EXAMPLES, MODELS, "pick", default)
    assert fresh[keys.LAST] == default and "pick" not in fresh and fresh[keys.LINK_NOTES] == []
    # A link with controls but no sentences (the projector's ?present=1) opens on the default example, not empty.
    bank = Controls(sentences=EXAMPLES["bank"], example="bank", word="bank")
    projector: dict = {}
    link.start_session(projector, {"present": "1", "k": "4"}, EXAMPLES, MODELS, "pick", bank)
    view = projector[keys.LAST]
    assert (view.sentences, view.example, view.word, view.k, view.present) == (
        EXAMPLES["bank"],
        "bank",
        "bank",
        4,
        True,
    )
    assert projector[keys.LINK_NOTES] == []
    assert link.clamp_query(20, 12) == (0, "The link's query occurrence #21 does not exist (there are 12); showing #1.")
    assert link.clamp_query(3, 12) == (3, "")


def test_a_link_names_a_published_model_and_a_server_without_it_says_so():
    """model= carries a named model: bundled, or published when the opening server has it in its cache; one
    that the server knows but has not downloaded gets the reason (with the operator's command), any other name
    the list; a server started on another model writes model= in every link, model=default too."""
    models = ("default", "lm-only", "small")
    missing = {
        "original": "is not downloaded on this server (the operator can run: python -m elmo_core download original)"
    }
    assert link.from_query({"model": "small"}, EXAMPLES, models, missing) == (Controls(model="small"), [])
    view, notes = link.from_query({"model": "original"}, EXAMPLES, models, missing)
    assert view.model == "default" and notes == [
        "The link asks for the model 'original', which is not downloaded on this server (the operator can run: "
        "python -m elmo_core download original). Using default."
    ]
    view, notes = link.from_query({"model": "<b>x</b>"}, EXAMPLES, models, missing, default_model="small")
    assert view.model == "small" and notes == [
        "The link asks for an unknown model '<b>x</b>'; the models here are default, lm-only, small. Using small."
    ]
    assert link.from_query({}, EXAMPLES, models, missing, default_model="small")[0].model == "small"
    assert link.to_query(Controls(model="small")) == {"model": "small"}
    assert link.to_query(Controls(model="default")) == {}
    assert link.to_query(Controls(model="default"), startup_model="small") == {"model": "default"}
    assert link.to_query(Controls(model="small"), startup_model="small") == {"model": "small"}
    # a session's start: the link's model, else the startup model's name (the radio's value)
    on_small = Controls(sentences="t", word="t", model="small")
    for params, picked, n_notes in [
        ({}, "small", 0),
        ({"model": "default"}, "default", 0),
        ({"model": "original"}, "small", 1),
        ({"model": "lm-only"}, "lm-only", 0),
    ]:
        ss: dict = {}
        link.start_session(ss, params, EXAMPLES, models, "pick", on_small, missing)
        assert ss["pick"] == picked and len(ss[keys.LINK_NOTES]) == n_notes, params


def test_what_a_link_cannot_carry():
    view = Controls(sentences="x" * (inputs.MAX_URL_TEXT + 1), model="default")
    notes = link.link_notes(view, "upload:abc", "my **model**", {keys.COMPARE_A: "session"})
    assert len(notes) == 3 and "“my \\*\\*model\\*\\*”" in notes[0] and "sees the “default” model" in notes[0]
    assert "not bundled" in notes[1] and "too long to keep in the link" in notes[2]
    assert link.link_notes(Controls(sentences="short"), "default", "default", {}) == []


@pytest.mark.parametrize(
    "query, expected, note",
    [
        ({"k": "4.0"}, ("k", 4), None),  # a whole number written as a float is that number
        ({"k": "1e3"}, ("k", 50), "The link's k (neighbours) '1e3' is outside 1 to 50; using 50."),
    ],
)
def test_whole_numbers_written_as_floats(query, expected, note):
    view, notes = link.from_query({"ex": "bank", **query}, EXAMPLES, MODELS)
    assert getattr(view, expected[0]) == expected[1]
    assert notes == ([note] if note else [])


def test_a_link_with_an_example_set_and_sentences_says_which_it_shows():
    view, notes = link.from_query({"ex": "bank", "s": "[a] The bank is here.", "word": "bank"}, EXAMPLES, MODELS)
    assert (view.example, view.sentences) == ("bank", EXAMPLES["bank"])
    assert notes == [
        "The link gives both an example set and sentences (s); it shows the example set 'bank' and "
        "leaves the sentences out."
    ]
