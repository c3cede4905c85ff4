"""Layer probes page: what each biLM layer knows (the probes of ``elmo_core.probes.TASKS``: two word-sense probes,
sense means and leave-one-out, and part of speech; learned layer weights s).

Widgets and wiring only; the logic is in ``app/explore/probes.py`` and ``elmo_core.probes``. Session-state keys
of this page start with "layers_"; "use these weights" writes the explorer's weight sliders through
``app.session.widgets.apply_weights`` (which updates its remembered view too) and opens the Explorer page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from app.explore import probes as lg
from app.render import probe_charts
from app.render.safe import md, md_with_code
from app.serving import limits, models, settings
from app.session import keys, widgets
from elmo_core import ProbeReport

ss = st.session_state


EXPLORER = "views/explorer.py"  # the page "use these weights" opens (relative to app/streamlit_app.py)
OPEN_EXPLORER = "layers_open_explorer"  # set by the callback; the page's run then switches to the Explorer


def use_weights(task: str, s: list[float], num_layers: int) -> None:
    """Button callback: set the explorer's sliders to the task's learned s, and have the run open the Explorer
    (``st.switch_page`` belongs in the script run, not in a callback), which says what was set beside its sliders."""
    try:
        w = widgets.apply_weights(ss, s, num_layers)
    except ValueError as err:
        ss["layers_message"] = ("error", str(err))
        return
    ss[keys.WEIGHTS_MESSAGE] = ("success", lg.used_weights_message(task, w))
    ss[OPEN_EXPLORER] = True


def results_for(model: models.LoadedModel) -> tuple[ProbeReport | None, str, str]:
    """(report, where it came from, warning) for the current model: computed in this session, else precomputed."""
    computed = ss.get("layers_computed", {}).get(model.key)
    if computed is not None:
        return computed, "computed in this session (subsampled: see the data notes)", ""
    fingerprints = ss.setdefault("layers_fingerprints", {})
    if model.key not in fingerprints:
        from elmo_core import model_fingerprint

        fingerprints[model.key] = model_fingerprint(model.embedder)
    report, why = lg.load_precomputed(show_paths=settings.allow_server_paths())
    report, warning = lg.matching_report(report, fingerprints[model.key], model.key)
    return report, "precomputed" if report is not None else why, warning


def compute_section(model: models.LoadedModel, have_results: bool, problems: list[str]) -> None:
    label = "Recompute for this model" if have_results else "Compute the probes for this model"
    if problems:  # checked up front: no button that can only fail
        st.info(
            "Computing the probes here needs the probe data (WordNet and the Brown corpus), which is not "
            "on this server (`make app` does not fetch it). Stop the app, prepare it once with"
            "\n\n```\npython -m elmo_core probe --prepare\n```\n\n(it fetches pinned versions of both into "
            "`data/probes/`), then start the app again and reload this page.\n\n"
            + "\n\n".join(f"- {md_with_code(p)}" for p in problems)
        )
        st.button(
            label, key="layers_compute_disabled", disabled=True, help="Disabled: the probe data is missing (see above)."
        )
        return
    st.caption(
        "Runs the probes on a subsample (about 3,000 WordNet examples, 600 Brown sentences and the 750 "
        "sentences of the 34-word sense probe): about a minute for a small model on 2 CPU cores, longer "
        "for large ones."
    )
    if not st.button(label, key="layers_compute", type="secondary" if have_results else "primary"):
        return
    bar = st.progress(0.0, text="Starting the probes…")
    try:
        report = lg.compute_report(
            limits.bounded_embedder(model), "quick", lambda f, text: bar.progress(min(f, 1.0), text=text)
        )
    except Exception as err:  # show any failure, keep the page usable
        bar.empty()
        st.error(f"The probes failed: {md(settings.for_visitor(err))}")
        return
    bar.empty()
    ss.setdefault("layers_computed", {})[model.key] = report
    st.rerun()


def results_section(report: ProbeReport, num_layers: int) -> None:
    tasks = report.tasks
    for row in lg.chart_rows(report):  # rows of two: a third chart would be 200 px at 1,024 px
        for col, (task, result) in zip(st.columns(lg.CHARTS_PER_ROW), row):
            with col:
                st.plotly_chart(probe_charts.task_figure(result), key=f"layers_chart_{task}", width="stretch")
                st.caption(md(lg.chart_caption(result)))
    st.plotly_chart(probe_charts.weights_figure(report), key="layers_chart_s", width="stretch")
    st.markdown("**Use a task's weights in the Explorer**")
    st.caption(
        "Sets the Explorer's w sliders so that softmax(w) is the task's learned s "
        "(rounded to the sliders' 0.1 steps) and opens the Explorer. γ is left as it is."
    )
    mixing = lg.mixing_tasks(report)
    for col, (task, result) in zip(st.columns(max(len(mixing), 1)), mixing.items()):
        s = result.s
        # the label short enough for one line at 1,024 px; the weights it sets under it
        col.button(
            f"Use the {lg.task_label(task)} weights",
            key=f"layers_use_{task}",
            on_click=use_weights,
            args=(task, s, num_layers),
            disabled=len(s) != num_layers,
            width="stretch",
        )
        col.caption(f"s = {' / '.join(f'{v:.2f}' for v in s)}")
    message = ss.pop("layers_message", None)
    if message:
        getattr(st, message[0])(message[1])
    # a static table wraps its cells (at 1,024 px a data grid cut the third task's column and "learned mix");
    # it renders them as markdown, so each is escaped ("-", no value, would be a list bullet)
    table = {md(head): [md(cell) for cell in cells] for head, cells in lg.summary_table(report).items()}
    st.table(pd.DataFrame(table).set_index(""))
    with st.expander("Data, method and how to read the numbers"):
        st.markdown(md(report.note))
        for title, note in lg.data_notes(report):
            st.markdown(f"**{md(title)}**: {md(note)}")
        st.markdown(
            "Baselines: *mfs* is the word's most frequent sense in the training split (for tagging, *most "
            "frequent tag*: the word form's); "
            "*chance* picks one of the lemma's training senses at random (leave-one-out probe: the "
            "expected score of a random other occurrence); *majority* is the most common tag; *bag of "
            "context* is the mean layer-0 vector of the sentence's other words. Layer scales (mean vector "
            "length per layer; the mix works on raw layers): "
            + "; ".join(f"{lg.task_label(t)} {r.layer_scale}" for t, r in tasks.items())
        )
        st.code("python -m elmo_core probe --task all --checkpoint DIR --out results.json", language="bash")


def main() -> None:
    if ss.pop(OPEN_EXPLORER, False):  # "use these weights" was clicked: the Explorer shows them
        try:
            st.switch_page(EXPLORER)
        except StreamlitPageNotFoundError:  # this page run on its own (no navigation): say where they went
            kind, text = ss.pop(keys.WEIGHTS_MESSAGE)
            ss["layers_message"] = (kind, f"{text} Open the Explorer page to see them.")
    try:
        model, note = models.page_model()
    except Exception as err:
        st.error(f"No model could be loaded: {md(settings.for_visitor(err))}")
        return
    st.title("What each layer knows")
    for note in ss.pop(keys.LINK_NOTES, None) or []:  # a session that opens on this page: what its link asked
        st.warning(md(note))
    st.markdown(lg.EXPLANATION)
    st.latex(lg.FORMULA)
    st.markdown(lg.EXPLANATION_AFTER)
    if note:
        st.info(md(settings.for_visitor(note)))
    embedder = model.embedder
    st.markdown(
        f"**Model:** {md(model.display_name)} · {embedder.num_parameters:,} parameters · "
        f"{embedder.num_layers} layers · vectors of {embedder.dim} numbers"
    )
    report, source, warning = results_for(model)
    problems = lg.data_problems(show_paths=settings.allow_server_paths())
    if report is None:
        st.info(
            f"{md(source)} No probe results for this model yet: "
            + (
                "computing them needs the probe data, which is missing here (see below)."
                if problems
                else "compute them below."
            )
        )
    else:
        st.caption(f"Results: {source}.")
        if warning:
            st.warning(warning)
        results_section(report, embedder.num_layers)
    compute_section(model, report is not None, problems)


main()
