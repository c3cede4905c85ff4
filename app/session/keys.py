"""The explorer's session-state keys, and the ranges and choices of its controls.

Every key of the explorer starts with ``PREFIX`` (private ones, not widgets, with ``"_" + PREFIX``), so the pages
and the model panel cannot collide. A control's widget key is named after its field of
``app.explore.controls.Controls`` (``key("gamma")`` holds ``Controls.gamma``); the exceptions are the weights
(one slider per layer, ``weight_key``), the Compare tab's two boxes (``COMPARE_A``, ``COMPARE_B``), presentation
mode (``PRESENT``, shared by both pages) and the model (the model panel's ``app.serving.models.BUNDLED_CHOICE_KEY``).
No Streamlit import.
"""

from __future__ import annotations

from app.explore import inputs, mixing
from app.explore.clusters import MAX_CLUSTERS as MAX_SENSE_CLUSTERS

PREFIX = "explorer_"


def key(name: str) -> str:
    """The session-state key of the explorer's control ``name`` (``"word"`` -> ``"explorer_word"``)."""
    return PREFIX + name


def private(name: str) -> str:
    """A private session-state key of the explorer (not a widget): ``"_explorer_" + name``."""
    return "_" + PREFIX + name


SENTENCES, WORD, INFLECTIONS, FOLD_CASE = key("sentences"), key("word"), key("inflections"), key("fold_case")
GAMMA, LAYER_NORM, PROJECTION, CONTEXT = key("gamma"), key("layer_norm"), key("projection"), key("context")
QUERY, K, SAME_WORD, COLOR_BY, TAB = key("query"), key("k"), key("same_word"), key("color_by"), key("tab")
MAP_CHART, UPLOAD = key("map_chart"), key("upload_txt")
SENTENCES_OPEN = key("sentences_open")  # the sentences box (an expander) is open
MAP_VIEW, N_CLUSTERS = key("map_view"), key("n_clusters")  # the map tab's "show" and the Senses tab's k
COMPARE_A, COMPARE_B = (
    key("compare_a"),
    key("compare_b"),
)  # the Compare tab's models (app.serving.models.comparison_choices)
PRESENT = "app_present"  # presentation mode: both pages and the sidebar follow it
LAST = private("controls")  # the last Controls: widget values for when the widgets were not drawn
LINK_NOTES = private("link_notes")  # what the link asked for that could not be shown
MAX_LINK_WEIGHTS = 16  # a link's w values read at most (more layers than any ELMo has)
LINK_QUERY = private("link_query")  # the link's query occurrence, checked once the occurrences are known
FRAME = key("frame")  # the last app.explore.frame.Frame: the next frame's memo, and what the tests read
COLOR_SET = private("color_set")  # the sense labels the colour-by choice was made for (color_by_choices)
WEIGHTS_MESSAGE = private("weights_message")  # (kind, text) beside the sliders: what "fit s" or the Layer probes set
SAVED = private("kept")  # the kept controls' values (app.session.widgets.remember)

W_RANGE = mixing.W_RANGE  # the w sliders' range (the URL parser clamps to it too)
W_STEP = mixing.W_STEP
GAMMA_RANGE = mixing.GAMMA_RANGE
K_RANGE = (1, 50)
MAX_URL_TEXT = inputs.MAX_URL_TEXT
COLOR_BY_CHOICES = ("label", "sentence", "spelling", "cluster")
MAP_VIEWS = {"mix": "the mix", "layers": "layers side by side"}  # the id a link uses, and the label shown
MAX_CLUSTERS = MAX_SENSE_CLUSTERS
# The explorer's tabs: the id a link uses, and the label shown. A new tab is one more entry.
# Short labels: the six fit in one row beside the weights rail at 1,024 px, in presentation mode's type too.
TABS = {
    "map": "Map",
    "neighbours": "Neighbours",
    "similarity": "Similarity",
    "senses": "Senses",
    "compare": "Compare",
    "export": "Export",
}
# controls whose widgets the explorer does not always draw
KEPT = (K, SAME_WORD, QUERY, COLOR_BY, TAB, MAP_VIEW, N_CLUSTERS, COMPARE_A, COMPARE_B)


def weight_key(j: int) -> str:
    """The session-state key of layer j's w slider."""
    return key(f"w_{j}")


# ---- the Corpus page (app/views/corpus.py): its own keys, so that its sliders and the explorer's never collide ----
CORPUS_PREFIX = "corpus_"


def corpus_key(name: str) -> str:
    """The session-state key of the Corpus page's control ``name`` (``"word"`` -> ``"corpus_word"``)."""
    return CORPUS_PREFIX + name


def corpus_weight_key(j: int) -> str:
    """The session-state key of the Corpus page's layer-j w slider."""
    return corpus_key(f"w_{j}")


CORPUS_SOURCE, CORPUS_WORD, CORPUS_TYPED = corpus_key("source"), corpus_key("word"), corpus_key("typed")
CORPUS_GAMMA, CORPUS_MAP, CORPUS_GROUPS = corpus_key("gamma"), corpus_key("map"), corpus_key("groups")
