"""ELMo Explorer: entry point. ``streamlit run app/streamlit_app.py``

Sets up the page, the navigation (Explorer; Layer probes when ``app/views/layers.py`` exists), a session's
start from its link (``app.state.start_session``), presentation mode and the shared sidebar model panel.
Configuration is read from environment variables, see ``app/resources.py``.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

# `app` is an installed package (`make app` installs the checkout in editable mode, the Docker image sets
# PYTHONPATH), so this script imports it like any other package, from wherever it is installed.
from app import resources, state
from app.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS
from app.safe import md

HERE = Path(__file__).resolve().parent

# emoji icons: a ":material/...:" page icon makes the browser fetch it from fonts.gstatic.com
st.set_page_config(page_title="ELMo Explorer", page_icon="🔎", layout="wide",
                   initial_sidebar_state="collapsed" if st.query_params.get("present") == "1" else "auto")
resources.umap_warm_up()  # once per server process, in the background

pages = [st.Page(HERE / "views" / "explorer.py", title="Explorer", icon="🔎", default=True)]
if (HERE / "views" / "layers.py").exists():
    pages.append(st.Page(HERE / "views" / "layers.py", title="Layer probes", icon="📊"))
navigation = st.navigation(pages)

PRESENT_CSS = """<style>
html { font-size: 19px; }
[data-testid="stMainBlockContainer"] { max-width: 100%; padding: 2.5rem 1.5rem 2rem 1.5rem; }
/* the six tabs fit beside the weights rail at 1,024 px */
[role="tab"] p { font-size: 0.8rem; }
[role="tablist"] { gap: 0.7rem; }
</style>"""
# the uploaders' "1GB per file • HDF5, H5, SAFETENSORS" line wraps instead of ending in "…" in the sidebar at 1,024 px
NORMAL_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-left: 2rem; padding-right: 2rem; }
[data-testid="stFileUploaderDropzoneInstructions"] span { white-space: normal; overflow: visible; }
</style>"""


def start_from_link() -> None:
    """A session's first run: the view its link asks for (``app.state``), before anything is drawn."""
    try:
        models = resources.bundled_choices() or ["default"]
    except Exception:  # no model at all: the model panel says why
        models = ["default"]
    start = EXAMPLE_SETS[DEFAULT_EXAMPLE]
    state.start_session(st.session_state, {k: st.query_params[k] for k in st.query_params},
                        {name: e.text for name, e in EXAMPLE_SETS.items()}, models, resources.BUNDLED_CHOICE_KEY,
                        state.View(text=start.text, example=start.name, word=start.word))


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
        choices = resources.bundled_choices()
        if len(choices) > 1:
            st.radio("Bundled model", choices, key=resources.BUNDLED_CHOICE_KEY, horizontal=True,
                     on_change=resources.release_model,  # picking a bundled model replaces an uploaded one
                     help="default: trained with the biLM objective plus teachers (GloVe, MiniLM); lm-only: the "
                          "paper's objective alone on the same 8M tokens. Model cards in assets/<name>/MODEL_CARD.md.")
        try:
            model, note = resources.current_model()
        except Exception as err:
            st.error(f"No model could be loaded: {md(err)}")
            st.stop()
        if len(choices) > 1 and model.key.startswith(("upload:", "path:")):
            # the radio keeps showing the bundled choice: say that it is not the model in use
            st.caption("Not in use while your loaded model is: picking a bundled model here unloads yours.")
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
                       "a river or with money) often form their own groups, while others still mix. Load the "
                       "published weights under “Load your own ELMo” below for the real thing.")
        if presenting:
            umap_status(resources.umap_warm_up().state == "warming")
            return st.empty()
        c1, c2 = st.columns(2)
        c1.metric("parameters", parameter_count(e.num_parameters), help=f"{e.num_parameters:,} parameters")
        c2.metric("layers × dim", f"{e.num_layers} × {e.dim}")
        st.caption(f"Device: {resources.device_description(e)}")
        timing_slot = st.empty()  # filled after the page ran, with this run's timings

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


def parameter_count(n: int) -> str:
    """A parameter count short enough for the sidebar's half-width metric at 1,024 px: 3.0 M, 105 k, 950."""
    return f"{n / 1e6:.1f} M" if n >= 1e6 else f"{n / 1e3:.0f} k" if n >= 1e3 else str(n)


def umap_status(warming: bool) -> None:
    """The UMAP warm-up's state, redrawn every 2 s while it lasts (the page's fragments rerun without the
    sidebar); when it ends the whole page reruns once, so maps that fell back to PCA become UMAP maps."""
    @st.fragment(run_every=2.0 if warming else None)
    def status() -> None:
        warm = resources.umap_warm_up()
        if warm.state == "warming":
            st.caption("UMAP is compiling in the background (about 20 s after the server starts on an idle machine, "
                       "minutes on a busy one); maps use PCA until it is ready.")
        elif warm.state == "failed":
            st.caption(f"UMAP is unavailable ({md(warm.error)}); maps use PCA or t-SNE.")
        elif warming:  # it was warming when the page was drawn: redraw the maps with UMAP, stop polling
            st.rerun()
    status()


start_from_link()
st.html(PRESENT_CSS if st.session_state.get(state.PRESENT) else NORMAL_CSS)
timing_slot = model_panel()
navigation.run()
if st.session_state.get("_timings"):
    timing_slot.caption(st.session_state["_timings"])
