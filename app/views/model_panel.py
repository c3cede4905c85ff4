"""The sidebar's model panel (widgets only): presentation mode, the model radio (bundled and downloaded models, which
a link's ``?model=`` sets), the model in use, the published models and their downloads, loading a user's own model,
and the UMAP warm-up's line. The model is resolved once per run here (``app.serving.models.current_model``); the
page takes it with ``models.page_model``."""

from __future__ import annotations

from contextlib import nullcontext

import streamlit as st

from app.render.safe import md, md_with_code
from app.serving import jobs, models, published, uploads
from app.serving.downloads import size_text
from app.serving.settings import allow_downloads, allow_server_paths, for_visitor
from app.session import keys
from elmo_core import download_command, mismatch_note

CHOICE_RESET = "_model_choice_reset"  # the model radio's value for the next run (set before the radio is drawn)
CHOICE_OK = "_model_choice_ok"  # the radio's last value whose model loaded
PUBLISHED_OPEN = "_published_open"  # the published models' list stays open once this session saw a download
UPLOAD_ROUND = "_upload_round"  # part of the uploaders' keys: a new round starts them empty
BUNDLED_HELP = (
    "default: trained for this app with the biLM objective plus teachers (GloVe, MiniLM); lm-only: the "
    "paper's objective alone on the same 8M tokens (model cards in assets/<name>/MODEL_CARD.md). Any other: "
    "a published ELMo model downloaded on this server (“Published ELMo models” below)."
)
SMALL_MODEL_NOTE = (
    "A small biLM trained for this app (model card: `assets/{folder}/MODEL_CARD.md`). It is much weaker "
    "than the published ELMo models. On our 34-word leave-one-out sense probe its best contextual layer "
    "is 34 points above chance for the default, whose top layer was trained to carry the content words "
    "on each side of a token, and 3 for lm-only (a GloVe bag of context: 38). So with the default, "
    "senses set apart by the words around them (“bank” by a river or with money) often form their own "
    "groups, while others still mix. The published ELMo models (“Published ELMo models” below) are the "
    "real thing."
)


def model_panel():
    """Sidebar: presentation mode, which model, its size and device, the last run's timings, and loading another
    model (not in presentation mode). Returns the slot for this run's timings (an ``st.empty``)."""
    with st.sidebar:
        st.toggle(
            "Presentation mode",
            key=keys.PRESENT,
            help="Larger type and fewer controls, for a projector. The link keeps it.",
        )
        presenting = bool(st.session_state.get(keys.PRESENT))
        st.header("Model")
        _last_run_messages()
        choices = models.model_choices()
        startup = models.startup_name()
        _settle_choice(choices, startup)
        if len(choices) > 1:
            st.radio(
                "Bundled and downloaded models",
                choices,
                key=models.BUNDLED_CHOICE_KEY,
                horizontal=True,
                on_change=models.release_model,  # picking a model here replaces an uploaded one
                help=BUNDLED_HELP,
            )
        try:
            model, note = _current_model(startup, choices)
        except Exception as err:
            st.error(f"No model could be loaded: {md(for_visitor(err))}")
            st.stop()
        _model_in_use(model, note, presenting, len(choices) > 1)
        if presenting:
            umap_status(jobs.umap_warm_up().state == "warming")
            return st.empty()
        e = model.embedder
        c1, c2 = st.columns(2)
        c1.metric("parameters", parameter_count(e.num_parameters), help=f"{e.num_parameters:,} parameters")
        c2.metric("layers × dim", f"{e.num_layers} × {e.dim}")
        st.caption(f"Device: {models.device_description(e)}")
        timing_slot = st.empty()  # filled after the page ran, with this run's timings
        if startup is not None:  # a server started on files offers no other named model
            published_models(model.key)
        with st.expander("Load your own ELMo"):
            _load_your_own(model)
        umap_status(jobs.umap_warm_up().state == "warming")
    return timing_slot


def _last_run_messages() -> None:
    """What the last run's load or failure left for this run to say (it reran to draw the panel again)."""
    message = st.session_state.pop("_model_message", None)
    if message:
        st.success(message)
    error = st.session_state.pop("_model_error", None)
    if error:
        st.error(error)
    info = st.session_state.pop("_model_info", None)
    if info:
        st.info(md(info))


def _model_in_use(model: models.LoadedModel, note: str, presenting: bool, has_radio: bool) -> None:
    if has_radio and model.key.startswith(("upload:", "path:")):
        # the radio keeps showing its choice: say that it is not the model in use
        st.caption("Not in use while your loaded model is: picking a model here unloads yours.")
    if model.warning:
        st.warning(md(for_visitor(model.warning)))
    if note:
        st.info(md(for_visitor(note)))
    st.markdown(f"**{md(model.display_name)}**  \n{md(model.source)}")
    if model.key in ("default", "bundled:lm-only") and not presenting:
        st.caption(SMALL_MODEL_NOTE.format(folder="default" if model.key == "default" else "lm-only"))
    if model.key.startswith("published:") and not presenting:
        st.caption(md(published.published_caption(model.key.split(":", 1)[1])))


def _settle_choice(choices: list[str], startup: str | None) -> None:
    """Before the model radio is drawn: apply a reset asked for by the last run (a model that failed to load,
    or was unloaded), and replace a value the radio no longer offers (a cached model deleted meanwhile)."""
    key = models.BUNDLED_CHOICE_KEY
    reset = st.session_state.pop(CHOICE_RESET, None)
    if reset is not None:
        st.session_state[key] = reset
    if len(choices) > 1 and key in st.session_state and st.session_state[key] not in choices:
        st.session_state[key] = startup if startup in choices else choices[0]


def _current_model(startup: str | None, choices: list[str]) -> tuple[models.LoadedModel, str]:
    """This session's model (``models.current_model``: this run's one resolution), with a spinner while a published
    model is read from the cache (seconds for Original). When the radio's published model cannot be loaded (over
    this server's limits, damaged files) or was unloaded to make room, the radio goes back and the panel says why,
    on a rerun."""
    choice = st.session_state.get(models.BUNDLED_CHOICE_KEY)
    named = choice is not None and choice != startup and choice in choices
    loading = models.model_to_load()
    try:
        spinner = st.spinner(f"Loading the published model {loading} from this server's cache…") if loading else None
        with spinner or nullcontext():
            model, note = models.current_model()
    except Exception as err:  # noqa: BLE001 - any failure: say what, keep the model we had
        if not named:
            raise
        back = st.session_state.get(CHOICE_OK)
        back = back if back in choices and back != choice else startup
        st.session_state["_model_error"] = (
            f"Could not load {md(choice)}: {md(for_visitor(err))}  \nStill using **{md(back)}**."
        )
        st.session_state[CHOICE_RESET] = back
        st.rerun()
    if named and note and model.key == models.startup_model().key:  # its model was unloaded meanwhile
        st.session_state["_model_info"] = for_visitor(note)
        st.session_state[CHOICE_RESET] = startup
        st.rerun()
    if choice in choices:
        st.session_state[CHOICE_OK] = choice
    return model, note


def _load_your_own(model: models.LoadedModel) -> None:
    """The uploaders, the server paths (when the operator allows them) and the way back to the startup model."""
    limits = uploads.UPLOAD_LIMITS_MB
    st.caption(
        "The published models' options.json + weights.hdf5 (e.g. Small or Original), or our "
        "format (options.json + model.safetensors), up to "
        f"{limits['weights']:,} MB. A file that does not load leaves the current model in place; "
        "uploaded files are read in memory and dropped after the load."
    )
    round_ = st.session_state.get(UPLOAD_ROUND, 0)
    opts = st.file_uploader(
        "options.json", type=["json"], key=f"upload_options_{round_}", max_upload_size=limits["options"]
    )
    weights = st.file_uploader(
        "weights", type=["hdf5", "h5", "safetensors"], key=f"upload_weights_{round_}", max_upload_size=limits["weights"]
    )
    if st.button("Load uploaded model", key="load_uploaded"):
        _load_uploaded(opts, weights, model)
    if allow_server_paths():
        st.divider()
        opath = st.text_input("options.json path on the server", key="server_options")
        wpath = st.text_input("weights path on the server", key="server_weights")
        if st.button("Load from server paths", key="load_server"):
            _load_server(opath, wpath, model)
    else:
        st.caption("Loading from paths on the server is disabled (set ELMO_EXPLORER_ALLOW_SERVER_PATHS=1 to enable).")
    if model.key != models.startup_model().key:
        st.button("Back to the startup model", key="model_reset", on_click=_back_to_startup)


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
    st.session_state[UPLOAD_ROUND] = st.session_state.get(UPLOAD_ROUND, 0) + 1


def _load_uploaded(options_file, weights_file, previous: models.LoadedModel) -> None:
    if options_file is None or weights_file is None:
        st.sidebar.error("Upload both files: options.json and the weights (.hdf5, or .safetensors for our format).")
        return
    try:
        uploads.check_upload_size("options", options_file.size, options_file.name)
        uploads.check_upload_size("weights", weights_file.size, weights_file.name)
        with st.spinner("Loading your model…"):
            model = uploads.load_uploaded_model(
                options_file.getvalue(), weights_file.getvalue(), weights_file.name, options_name=options_file.name
            )
    except Exception as err:  # any bad file: say what is wrong, keep the model we had
        st.session_state["_model_error"] = (
            f"Could not load this model: {md(for_visitor(err))}  \nStill using **{md(previous.display_name)}**."
        )
        _forget_uploads(options_file, weights_file)
        st.rerun()
    st.session_state["_model_message"] = f"Loaded {md(model.display_name)}."
    _forget_uploads(options_file, weights_file)
    st.rerun()  # the panel above was drawn with the previous model: draw it again with the new one


def _load_server(options_path: str, weights_path: str, previous: models.LoadedModel) -> None:
    try:
        with st.spinner("Loading the model…"):
            model = uploads.load_server_model(options_path.strip(), weights_path.strip())
    except Exception as err:
        st.sidebar.error(f"Could not load this model: {md(err)}  \nStill using **{md(previous.display_name)}**.")
        return
    st.session_state["_model_message"] = f"Loaded {md(model.display_name)}."
    st.rerun()  # the panel above was drawn with the previous model: draw it again with the new one


def _back_to_startup() -> None:
    models.release_model()
    startup = models.startup_name()
    if startup is not None and models.BUNDLED_CHOICE_KEY in st.session_state:
        st.session_state[models.BUNDLED_CHOICE_KEY] = startup  # the radio too, or its model comes back


def published_models(current_key: str) -> None:
    """The published ELMo models: a cached one is offered in the Model radio above; the others show their size
    and the command that downloads them, and, when the operator allows it (``ELMO_EXPLORER_ALLOW_DOWNLOADS=1``),
    a Download button. A download runs in the background (``app.serving.downloads``: one per model whatever the
    number of sessions); its progress is redrawn every second without the rest of the page, in every session that
    sees the list while it runs, whichever session started it, and when it ends the whole page reruns once, so the
    model appears in the radio."""
    downloads = published.downloads()
    running = set(downloads.running())
    allowed = allow_downloads()
    if running:  # open while a download runs, and after it: a changed `expanded` would close the list on the user
        st.session_state[PUBLISHED_OPEN] = True
    with st.expander("Published ELMo models", expanded=bool(st.session_state.get(PUBLISHED_OPEN))):
        st.caption(
            "AllenNLP's English ELMo models (Peters et al., 2018). A downloaded one is offered under Model "
            "above; a download is verified before it is kept."
        )

        @st.fragment(run_every=1.0 if running else None)
        def rows() -> None:
            try:
                entries = published.published_entries()
            except OSError as err:
                st.caption(f"This server's model cache cannot be read: {md(for_visitor(err))}")
                return
            for name, entry in entries.items():
                published_row(entry, downloads.get(name), allowed, current_key)
            if not allowed and any(e.state != "cached" for e in entries.values()):
                st.caption(
                    "Downloading from this page is off on this server (the operator can turn it on with "
                    "ELMO_EXPLORER_ALLOW_DOWNLOADS=1)."
                )
            if set(downloads.running()) != running:
                # A download ended (draw the radio again, stop polling), or one runs that this list does not poll
                # for: another session's, which a press here joined (a press in this list reruns only the list,
                # so the page's timer was never set). The whole page again: the list polls while any runs.
                st.rerun()

        rows()


def published_row(entry, download, allowed: bool, current_key: str) -> None:
    """One published model in the panel's list (``entry``: an ``elmo_core.CacheEntry``): its size, and whether it is
    here, how to get it, or how far its download is."""
    m = entry.model
    size = ("" if m.weights_bytes else "about ") + size_text(m.approx_bytes)
    st.markdown(f"**{md(m.title)}** · {m.parameters / 1e6:.1f}M parameters · {md(size)}")
    if entry.state == "cached":
        if current_key == f"published:{m.name}":
            st.caption("In use.")  # a mismatch note is above, with the model's name
        else:
            note = mismatch_note(entry)
            st.caption(
                f"Downloaded: pick “{md(m.name)}” under Model above."
                + (f" {md(note[:1].upper() + note[1:])}." if note else "")
            )
        return
    if download is not None and download.running:
        st.progress(download.fraction, text=md(for_visitor(download.text())))
        return
    if download is not None and download.error:
        st.error(md(for_visitor(download.text())))
    what = (
        "Not downloaded on this server."
        if entry.state == "missing"
        else f"Damaged in this server's cache ({entry.detail})."
    )  # md_with_code escapes it
    command = for_visitor(download_command(m.name) + (" --force" if entry.state == "damaged" else ""))
    st.caption(md_with_code(f"{what} The operator can run `{command}`"))
    too_large = published.published_over_limits(m)
    if too_large:
        st.caption(md(too_large))
    elif allowed and st.button(
        f"Download ({size})",
        key=f"download_{m.name}",
        help=f"Fetches {m.name} into this server's cache in the background; the page stays usable meanwhile.",
    ):
        published.start_download(m.name)
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
        warm = jobs.umap_warm_up()
        if warm.state == "warming":
            st.caption(jobs.UMAP_LOADING)
        elif warm.state == "failed":
            st.caption(f"UMAP is unavailable ({md(warm.error)}); a map that asks for it shows PCA and says why.")

    status()
