"""ELMo Explorer: entry point. ``streamlit run app/streamlit_app.py``

Sets up the page, the navigation (Explorer; Layer probes when ``app/views/layers.py`` exists), a session's
start from its link (``app.session.state.start_session``), presentation mode and the shared sidebar model panel.
Configuration is read from environment variables, see ``app/serving/resources.py``.
"""
from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import streamlit as st

# `app` is an installed package (`make app` installs the checkout in editable mode, the Docker image sets
# PYTHONPATH), so this script imports it like any other package, from wherever it is installed.
from app.serving import resources
from app.session import state
from app.explore.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS
from app.serving.downloads import size_text
from app.render.safe import md, md_with_code

HERE = Path(__file__).resolve().parent


# emoji icons: a ":material/...:" page icon makes the browser fetch it from fonts.gstatic.com. The sidebar (the
# model panel) starts closed: the page is map-first, and at 1,024 px an open sidebar leaves the map and the views
# beside the weights rail some 420 px. The pages' links stand in the top bar, so they show without it.
st.set_page_config(page_title="ELMo Explorer", page_icon="🔎", layout="wide", initial_sidebar_state="collapsed")
resources.umap_warm_up()  # once per server process, in the background

pages = [st.Page(HERE / "views" / "explorer.py", title="Explorer", icon="🔎", default=True)]
if (HERE / "views" / "layers.py").exists():
    pages.append(st.Page(HERE / "views" / "layers.py", title="Layer probes", icon="📊"))
navigation = st.navigation(pages, position="top")

# Both modes. The explorer's rail (the weights beside the map) keeps room for a slider and its label however
# narrow the page; the map tab's row (map | neighbours of the query point) puts the neighbours under the map
# when the row is too narrow for both (the map would get much narrower than tall); and where the views beside
# the rail are narrow (1,024 px with the sidebar open) their columns stack instead of cutting their buttons'
# labels, except the map's own row of options, which keeps the map's top up beside the sliders.
LAYOUT_CSS = """<style>
.st-key-explorer_live > div > [data-testid="stHorizontalBlock"] > [data-testid="stColumn"]:first-child {
  flex: 0 0 auto !important; width: clamp(215px, 24%, 320px) !important; }
.st-key-explorer_live > div > [data-testid="stHorizontalBlock"] > [data-testid="stColumn"]:last-child {
  flex: 1 1 320px !important; min-width: 0; }
.st-key-explorer_map_row, .st-key-explorer_views { container-type: inline-size; }
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
</style>"""
# The title row just under the top bar (which holds the pages' links): the sliders and the map start higher. The
# uploaders' "1GB per file • HDF5, H5,
# SAFETENSORS" line wraps instead of ending in "…" in the sidebar at 1,024 px.
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


def start_from_link() -> None:
    """A session's first run: the view its link asks for (``app.session.state``), before anything is drawn."""
    try:
        models = resources.model_choices()
        unavailable = resources.unavailable_models() if models else {}
        startup = resources.startup_name() or "default"
    except Exception:  # no model at all: the model panel says why
        models, unavailable, startup = [], {}, "default"
    start = EXAMPLE_SETS[DEFAULT_EXAMPLE]
    state.start_session(st.session_state, {k: st.query_params[k] for k in st.query_params},
                        {name: e.text for name, e in EXAMPLE_SETS.items()}, models or ["default"],
                        resources.BUNDLED_CHOICE_KEY,
                        state.View(text=start.text, example=start.name, word=start.word, model=startup), unavailable)


def _forget_uploads(*files) -> None:
    """Drop the uploaded bytes Streamlit keeps for this session (up to the weights limit each) and give the
    two uploaders new keys, so that they start empty instead of pointing at removed files."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    for file in files:
        try:
            ctx.uploaded_file_mgr.remove_file(ctx.session_id, file.file_id)
        except Exception:  # AppTest, or already gone: nothing to free
            pass
    st.session_state["_upload_round"] = st.session_state.get("_upload_round", 0) + 1


def _load_uploaded(options_file, weights_file) -> None:
    previous, _ = resources.current_model()
    if options_file is None or weights_file is None:
        st.sidebar.error("Upload both files: options.json and the weights (.hdf5, or .safetensors for our format).")
        return
    try:
        resources.check_upload_size("options", options_file.size, options_file.name)
        resources.check_upload_size("weights", weights_file.size, weights_file.name)
        with st.spinner("Loading your model…"):
            model = resources.load_uploaded_model(options_file.getvalue(), weights_file.getvalue(), weights_file.name,
                                                  options_name=options_file.name)
    except Exception as err:  # any bad file: say what is wrong, keep the model we had
        st.session_state["_model_error"] = (f"Could not load this model: {md(err)}  \nStill using "
                                            f"**{md(previous.display_name)}**.")
        _forget_uploads(options_file, weights_file)
        st.rerun()
    st.session_state["_model_message"] = f"Loaded {md(model.display_name)}."
    _forget_uploads(options_file, weights_file)
    st.rerun()  # the panel above was drawn with the previous model: draw it again with the new one


def _load_server(options_path: str, weights_path: str) -> None:
    previous, _ = resources.current_model()
    try:
        with st.spinner("Loading the model…"):
            model = resources.load_server_model(options_path.strip(), weights_path.strip())
    except Exception as err:
        st.sidebar.error(f"Could not load this model: {md(err)}  \nStill using **{md(previous.display_name)}**.")
        return
    st.session_state["_model_message"] = f"Loaded {md(model.display_name)}."
    st.rerun()  # the panel above was drawn with the previous model: draw it again with the new one


def _back_to_startup() -> None:
    resources.release_model()
    startup = resources.startup_name()
    if startup is not None and resources.BUNDLED_CHOICE_KEY in st.session_state:
        st.session_state[resources.BUNDLED_CHOICE_KEY] = startup  # the radio too, or its model comes back


CHOICE_RESET = "_model_choice_reset"  # the model radio's value for the next run (set before the radio is drawn)
CHOICE_OK = "_model_choice_ok"  # the radio's last value whose model loaded
PUBLISHED_OPEN = "_published_open"  # the published models' list stays open once this session saw a download


def _settle_choice(choices: list[str], startup: str | None) -> None:
    """Before the model radio is drawn: apply a reset asked for by the last run (a model that failed to load,
    or was unloaded), and replace a value the radio no longer offers (a cached model deleted meanwhile)."""
    key = resources.BUNDLED_CHOICE_KEY
    reset = st.session_state.pop(CHOICE_RESET, None)
    if reset is not None:
        st.session_state[key] = reset
    if len(choices) > 1 and key in st.session_state and st.session_state[key] not in choices:
        st.session_state[key] = startup if startup in choices else choices[0]


def _current_model(startup: str | None, choices: list[str]):
    """This session's model, with a spinner while a published model is read from the cache (seconds for
    Original). When the radio's published model cannot be loaded (over this server's limits, damaged files) or
    was unloaded to make room, the radio goes back and the panel says why, on a rerun."""
    key = resources.BUNDLED_CHOICE_KEY
    choice = st.session_state.get(key)
    named = choice is not None and choice != startup and choice in choices
    loading = resources.model_to_load()
    try:
        spinner = st.spinner(f"Loading the published model {loading} from this server's cache…") if loading else None
        with spinner or nullcontext():
            model, note = resources.current_model()
    except Exception as err:  # noqa: BLE001 - any failure: say what, keep the model we had
        if not named:
            raise
        back = st.session_state.get(CHOICE_OK)
        back = back if back in choices and back != choice else startup
        st.session_state["_model_error"] = (f"Could not load {md(choice)}: {md(err)}  \nStill using "
                                            f"**{md(back)}**.")
        st.session_state[CHOICE_RESET] = back
        st.rerun()
    if named and note and model.key == resources.startup_model().key:  # its model was unloaded meanwhile
        st.session_state["_model_info"] = note
        st.session_state[CHOICE_RESET] = startup
        st.rerun()
    if choice in choices:
        st.session_state[CHOICE_OK] = choice
    return model, note


def model_panel():
    """Sidebar: presentation mode, which model, its size and device, the last run's timings, and loading another
    model (not in presentation mode)."""
    with st.sidebar:
        st.toggle("Presentation mode", key=state.PRESENT,
                  help="Larger type and fewer controls, for a projector. The link keeps it.")
        presenting = bool(st.session_state.get(state.PRESENT))
        st.header("Model")
        message = st.session_state.pop("_model_message", None)
        if message:
            st.success(message)
        error = st.session_state.pop("_model_error", None)
        if error:
            st.error(error)
        info = st.session_state.pop("_model_info", None)
        if info:
            st.info(md(info))
        choices = resources.model_choices()
        startup = resources.startup_name()
        _settle_choice(choices, startup)
        if len(choices) > 1:
            st.radio("Bundled and downloaded models", choices, key=resources.BUNDLED_CHOICE_KEY, horizontal=True,
                     on_change=resources.release_model,  # picking a model here replaces an uploaded one
                     help="default: trained for this app with the biLM objective plus teachers (GloVe, MiniLM); "
                          "lm-only: the paper's objective alone on the same 8M tokens (model cards in "
                          "assets/<name>/MODEL_CARD.md). Any other: a published ELMo model downloaded on this "
                          "server (“Published ELMo models” below).")
        try:
            model, note = _current_model(startup, choices)
        except Exception as err:
            st.error(f"No model could be loaded: {md(err)}")
            st.stop()
        if len(choices) > 1 and model.key.startswith(("upload:", "path:")):
            # the radio keeps showing its choice: say that it is not the model in use
            st.caption("Not in use while your loaded model is: picking a model here unloads yours.")
        if model.warning:
            st.warning(md(model.warning))
        if note:
            st.info(md(note))
        e = model.embedder
        st.markdown(f"**{md(model.display_name)}**  \n{md(model.source)}")
        if model.key in ("default", "bundled:lm-only") and not presenting:
            folder = "default" if model.key == "default" else "lm-only"
            st.caption(f"A small biLM trained for this app (model card: `assets/{folder}/MODEL_CARD.md`). It is much "
                       "weaker than the published ELMo models. On our 34-word leave-one-out sense probe its best "
                       "contextual layer is 34 points above chance for the default, whose top layer was trained "
                       "to carry the content words on each side of a token, and 3 for lm-only (a GloVe bag of "
                       "context: 38). So with the default, senses set apart by the words around them (“bank” by "
                       "a river or with money) often form their own groups, while others still mix. The "
                       "published ELMo models (“Published ELMo models” below) are the real thing.")
        if model.key.startswith("published:") and not presenting:
            st.caption(md(resources.published_caption(model.key.split(":", 1)[1])))
        if presenting:
            umap_status(resources.umap_warm_up().state == "warming")
            return st.empty()
        c1, c2 = st.columns(2)
        c1.metric("parameters", parameter_count(e.num_parameters), help=f"{e.num_parameters:,} parameters")
        c2.metric("layers × dim", f"{e.num_layers} × {e.dim}")
        st.caption(f"Device: {resources.device_description(e)}")
        timing_slot = st.empty()  # filled after the page ran, with this run's timings

        if startup is not None:  # a server started on files offers no other named model
            published_models(model.key)
        with st.expander("Load your own ELMo"):
            limits = resources.UPLOAD_LIMITS_MB
            st.caption("The published models' options.json + weights.hdf5 (e.g. Small or Original), or our "
                       "format (options.json + model.safetensors), up to "
                       f"{limits['weights']:,} MB. A file that does not load leaves the current model in place; "
                       "uploaded files are read in memory and dropped after the load.")
            round_ = st.session_state.get("_upload_round", 0)
            opts = st.file_uploader("options.json", type=["json"], key=f"upload_options_{round_}",
                                    max_upload_size=limits["options"])
            weights = st.file_uploader("weights", type=["hdf5", "h5", "safetensors"], key=f"upload_weights_{round_}",
                                       max_upload_size=limits["weights"])
            if st.button("Load uploaded model", key="load_uploaded"):
                _load_uploaded(opts, weights)
            if resources.allow_server_paths():
                st.divider()
                opath = st.text_input("options.json path on the server", key="server_options")
                wpath = st.text_input("weights path on the server", key="server_weights")
                if st.button("Load from server paths", key="load_server"):
                    _load_server(opath, wpath)
            else:
                st.caption("Loading from paths on the server is disabled "
                           "(set ELMO_EXPLORER_ALLOW_SERVER_PATHS=1 to enable).")
            if model.key != resources.startup_model().key:
                st.button("Back to the startup model", key="model_reset", on_click=_back_to_startup)

        umap_status(resources.umap_warm_up().state == "warming")
    return timing_slot


def published_models(current_key: str) -> None:
    """The published ELMo models: a cached one is offered in the Model radio above; the others show their size
    and the command that downloads them, and, when the operator allows it (``ELMO_EXPLORER_ALLOW_DOWNLOADS=1``),
    a Download button. A download runs in the background (``app.serving.downloads``: one per model whatever the number
    of sessions); its progress is redrawn every second without the rest of the page, and when it ends the whole
    page reruns once, so the model appears in the radio."""
    downloads = resources.downloads()
    running = set(downloads.running())
    allowed = resources.allow_downloads()
    if running:  # open while a download runs, and after it: a changed `expanded` would close the list on the user
        st.session_state[PUBLISHED_OPEN] = True
    with st.expander("Published ELMo models", expanded=bool(st.session_state.get(PUBLISHED_OPEN))):
        st.caption("AllenNLP's English ELMo models (Peters et al., 2018). A downloaded one is offered under Model "
                   "above; a download is verified before it is kept.")

        @st.fragment(run_every=1.0 if running else None)
        def rows() -> None:
            try:
                entries = resources.published_entries()
            except OSError as err:
                st.caption(f"This server's model cache cannot be read: {md(err)}")
                return
            for name, entry in entries.items():
                published_row(entry, downloads.get(name), allowed, current_key)
            if not allowed and any(e.state != "cached" for e in entries.values()):
                st.caption("Downloading from this page is off on this server (the operator can turn it on with "
                           "ELMO_EXPLORER_ALLOW_DOWNLOADS=1).")
            if running - set(downloads.running()):  # a download ended: draw the radio again, and stop polling
                st.rerun()
        rows()


def published_row(entry, download, allowed: bool, current_key: str) -> None:
    """One published model in the panel's list: its size, and whether it is here, how to get it, or how far its
    download is."""
    from elmo_core.model.published import download_command, mismatch_note
    m = entry.model
    size = ("" if m.weights_bytes else "about ") + size_text(m.approx_bytes)
    st.markdown(f"**{md(m.title)}** · {m.parameters / 1e6:.1f}M parameters · {md(size)}")
    if entry.state == "cached":
        if current_key == f"published:{m.name}":
            st.caption("In use.")  # a mismatch note is above, with the model's name
        else:
            note = mismatch_note(entry)
            st.caption(f"Downloaded: pick “{md(m.name)}” under Model above."
                       + (f" {md(note[:1].upper() + note[1:])}." if note else ""))
        return
    if download is not None and download.running:
        st.progress(download.fraction, text=md(download.text()))
        return
    if download is not None and download.error:
        st.error(md(download.text()))
    what = "Not downloaded on this server." if entry.state == "missing" else \
        f"Damaged in this server's cache ({entry.detail})."  # md_with_code escapes it
    command = download_command(m.name) + (" --force" if entry.state == "damaged" else "")
    st.caption(md_with_code(f"{what} The operator can run `{command}`"))
    too_large = resources.published_over_limits(m.name)
    if too_large:
        st.caption(md(too_large))
    elif allowed and st.button(f"Download ({size})", key=f"download_{m.name}", help=f"Fetches {m.name} into this "
                               "server's cache in the background; the page stays usable meanwhile."):
        resources.start_download(m.name)
        st.session_state[PUBLISHED_OPEN] = True
        st.rerun()  # the whole panel again: the list polls while the download runs


def parameter_count(n: int) -> str:
    """A parameter count short enough for the sidebar's half-width metric at 1,024 px: 3.0 M, 105 k, 950."""
    return f"{n / 1e6:.1f} M" if n >= 1e6 else f"{n / 1e3:.0f} k" if n >= 1e3 else str(n)


def umap_status(warming: bool) -> None:
    """The UMAP warm-up's state, redrawn every 2 s while it lasts (the page's fragments rerun without the
    sidebar). Only a line: the maps never depend on it (a UMAP map waits for the warm-up), so nothing is redrawn
    when it ends."""
    @st.fragment(run_every=2.0 if warming else None)
    def status() -> None:
        warm = resources.umap_warm_up()
        if warm.state == "warming":
            st.caption(resources.UMAP_LOADING)
        elif warm.state == "failed":
            st.caption(f"UMAP is unavailable ({md(warm.error)}); a map that asks for it shows PCA and says why.")
    status()


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
    if not st.session_state.get(state.PRESENT):
        st.session_state.pop(SIDEBAR_CLOSED, None)
    elif not st.session_state.get(SIDEBAR_CLOSED):
        st.session_state[SIDEBAR_CLOSED] = True
        st.sidebar.html(CLOSE_SIDEBAR_JS, unsafe_allow_javascript=True)  # a script of ours: no user text in it


start_from_link()
rerun_after_reconnect()
st.html(LAYOUT_CSS + (PRESENT_CSS if st.session_state.get(state.PRESENT) else NORMAL_CSS))
close_sidebar_for_presentation()
timing_slot = model_panel()
navigation.run()
if st.session_state.get("_timings"):
    timing_slot.caption(st.session_state["_timings"])
