"""The page's frame around both pages: its CSS (both modes, presentation mode), closing the sidebar for
presentation mode, and the auto-rerun that makes a reconnected tab run the page again."""

from __future__ import annotations

import streamlit as st

from app.session import keys

# Both modes. The explorer's rail (the weights beside the map) keeps room for a slider and its label however
# narrow the page; the map tab's row (map | neighbours of the query point) puts the neighbours under the map
# when the row is too narrow for both (the map would get much narrower than tall); and where the views beside
# the rail are narrow (1,024 px with the sidebar open) their columns stack instead of cutting their buttons'
# labels. The map's "colour by" and "show" share one row above the map (each label before its options), which
# wraps where they do not fit: the map's top stays up beside the sliders.
LAYOUT_CSS = """<style>
.st-key-explorer_live > div > [data-testid="stHorizontalBlock"] > [data-testid="stColumn"]:first-child {
  flex: 0 0 auto !important; width: clamp(215px, 24%, 320px) !important; }
.st-key-explorer_live > div > [data-testid="stHorizontalBlock"] > [data-testid="stColumn"]:last-child {
  flex: 1 1 320px !important; min-width: 0; }
.st-key-explorer_map_row, .st-key-explorer_views { container-type: inline-size; }
.st-key-explorer_map_options { row-gap: 0.3rem; }
.st-key-explorer_map_options [data-testid="stRadio"] { display: flex; flex-flow: row wrap; align-items: center;
  column-gap: 0.6rem; }
.st-key-explorer_map_options [data-testid="stRadio"] > label { margin: 0; min-height: 0; }
.st-key-explorer_map_options [data-testid="stRadioGroup"] { min-height: 0; }
@container (max-width: 600px) {
  .st-key-explorer_views [data-testid="stHorizontalBlock"]:not(.st-key-explorer_map_row [data-testid="stHorizontalBlock"]) {
    flex-wrap: wrap; }
  .st-key-explorer_views [data-testid="stHorizontalBlock"]:not(.st-key-explorer_map_row [data-testid="stHorizontalBlock"])
    > [data-testid="stColumn"] { flex: 1 1 100% !important; width: 100% !important; min-width: 100% !important; }
}
@container (max-width: 740px) {
  .st-key-explorer_map_row > div > [data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
  .st-key-explorer_map_row > div > [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] {
    flex: 1 1 100% !important; width: 100% !important; min-width: 100% !important; }
}
</style>"""
PRESENT_CSS = """<style>
html { font-size: 19px; }
[data-testid="stMainBlockContainer"] { max-width: 100%; padding: 3.5rem 1.5rem 2rem 1.5rem; }
/* the six tabs fit beside the weights rail at 1,024 px */
[role="tab"] p { font-size: 0.8rem; }
[role="tablist"] { gap: 0.7rem; }
/* the map's "colour by" and "show" in one row above the map at 1,024 px */
.st-key-explorer_map_options [data-testid="stRadio"] p { font-size: 0.8rem; }
</style>"""
# The title row just under the top bar (which holds the pages' links): the sliders and the map start higher. The
# uploaders' "1GB per file • HDF5, H5, SAFETENSORS" line wraps instead of ending in "…" in the sidebar at 1,024 px.
NORMAL_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding: 4rem 1.5rem 2rem 1.5rem; }
[data-testid="stHeading"] h1 { font-size: 2rem; padding: 0; }
[data-testid="stFileUploaderDropzoneInstructions"] span { white-space: normal; overflow: visible; }
</style>"""
# Streamlit keeps a browser's own opening or closing of the sidebar (per page, in its local storage) over
# set_page_config's "collapsed", so turning presentation mode on closes an open sidebar as its button would.
CLOSE_SIDEBAR_JS = """<script>
document.querySelector('[data-testid="stSidebar"][data-collapsed="false"] '
                       + '[data-testid="stSidebarCollapseButton"] button')?.click();
</script>"""
SIDEBAR_CLOSED = "_app_sidebar_closed"  # presentation mode has closed the sidebar once since it was turned on


def style_page() -> None:
    """The CSS of both modes, and presentation mode's or the normal one's."""
    st.html(LAYOUT_CSS + (PRESENT_CSS if st.session_state.get(keys.PRESENT) else NORMAL_CSS))


@st.fragment(run_every=3600)
def rerun_after_reconnect() -> None:
    """Draws nothing; it is here for its auto-rerun. Behind a balancer (deploy/), a tab whose replica went away
    reconnects to another replica, which does not hold its session. Streamlit's frontend asks for a full run
    after a reconnect only when the page has an auto-rerunning fragment (or its last run was a fragment run);
    without one the new session never runs the page and drops every slider move (a rerun of a fragment it does
    not know) until another widget reruns the whole page. With it, every reconnect reruns the page, which
    rebuilds the view from the URL (tests/app/test_replicas.py). Once an hour it reruns this empty body."""


def close_sidebar_for_presentation() -> None:
    """Once each time presentation mode is turned on (by the link or the switch), whatever this browser
    remembers of the sidebar: the projector shows the page, not the model panel."""
    if not st.session_state.get(keys.PRESENT):
        st.session_state.pop(SIDEBAR_CLOSED, None)
    elif not st.session_state.get(SIDEBAR_CLOSED):
        st.session_state[SIDEBAR_CLOSED] = True
        st.sidebar.html(CLOSE_SIDEBAR_JS, unsafe_allow_javascript=True)  # a script of ours: no user text in it
