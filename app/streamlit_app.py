"""ELMo Explorer: entry point. ``streamlit run app/streamlit_app.py``

Wires the page together: its settings, the navigation (Explorer; Layer probes when ``app/views/layers.py``
exists), a session's start from its link (``app.session.link.start_session``), the page's frame
(``app.views.layout``) and the sidebar's model panel (``app.views.model_panel``), which resolves this run's model
once for the page. Configuration is read from environment variables, see ``app/serving/settings.py``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

# `app` is an installed package (`make app` installs the checkout in editable mode, the Docker image sets
# PYTHONPATH), so this script imports it like any other package, from wherever it is installed.
from app.explore.controls import Controls
from app.explore.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS
from app.serving import jobs, models, published
from app.session import link
from app.views import layout
from app.views.model_panel import model_panel

HERE = Path(__file__).resolve().parent


# emoji icons: a ":material/...:" page icon makes the browser fetch it from fonts.gstatic.com. The sidebar (the
# model panel) starts closed: the page is map-first, and at 1,024 px an open sidebar leaves the map and the views
# beside the weights rail some 420 px. The pages' links stand in the top bar, so they show without it.
st.set_page_config(page_title="ELMo Explorer", page_icon="🔎", layout="wide", initial_sidebar_state="collapsed")
jobs.umap_warm_up()  # once per server process, in the background

pages = [st.Page(HERE / "views" / "explorer.py", title="Explorer", icon="🔎", default=True)]
if (HERE / "views" / "layers.py").exists():
    pages.append(st.Page(HERE / "views" / "layers.py", title="Layer probes", icon="📊"))
pages.append(st.Page(HERE / "views" / "corpus.py", title="Corpus", icon="📚"))
navigation = st.navigation(pages, position="top")


def start_from_link() -> None:
    """A session's first run: the view its link asks for (``app.session.link``), before anything is drawn."""
    try:
        choices = models.model_choices()
        unavailable = published.unavailable_models() if choices else {}
        startup = models.startup_name() or "default"
    except Exception:  # no model at all: the model panel says why
        choices, unavailable, startup = [], {}, "default"
    start = EXAMPLE_SETS[DEFAULT_EXAMPLE]
    link.start_session(
        st.session_state,
        {k: st.query_params[k] for k in st.query_params},
        {name: e.text for name, e in EXAMPLE_SETS.items()},
        choices or ["default"],
        models.BUNDLED_CHOICE_KEY,
        Controls(sentences=start.text, example=start.name, word=start.word, model=startup),
        unavailable,
    )


start_from_link()
layout.rerun_after_reconnect()
layout.style_page()
layout.close_sidebar_for_presentation()
timing_slot = model_panel()
navigation.run()
if st.session_state.get("_timings"):
    timing_slot.caption(st.session_state["_timings"])
