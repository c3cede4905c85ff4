"""The rail beside the map: the weight sliders and γ, the presets, "Fit s to my labels" and the map's own
controls. The page draws it inside its live fragment, so that moving any of them reruns only the map's part."""

from __future__ import annotations

import streamlit as st

from app.explore import activations, inputs, mixing, projections, weight_effect
from app.explore import fit as fm
from app.explore.frame import layer_name
from app.render.safe import md
from app.session import keys, widgets
from app.views.explorer_parts.common import ss


# ---- callbacks (run before the script, so they may set widget state) --------------------------------------
def set_weights(preset: str, num_layers: int) -> None:
    widgets.set_preset(ss, preset, num_layers)


def reset_controls(num_layers: int) -> None:
    set_weights("equal", num_layers)
    ss[keys.GAMMA], ss[keys.LAYER_NORM], ss[keys.PROJECTION] = 1.0, False, "live"


# ---- the rail -----------------------------------------------------------------------------------------------
def weights_section(num_layers: int, present: bool = False) -> None:
    """The weight sliders and γ, one under another in the rail beside the map, each weight's s_j in its label
    (s = softmax(w) of the values the sliders hold this run: what the frame mixes), so that no line of its own
    stands between two sliders. ``present``: presentation mode's shorter heading."""
    if present:
        st.markdown("**3 · Weights**")
    else:
        st.subheader("3 · Weights")
    s = mixing.softmax([float(ss.get(keys.weight_key(j), 0.0)) for j in range(num_layers)])
    for j in range(num_layers):
        st.slider(
            f"w_{j} · layer {j}: s_{j} = **{s[j]:.3f}**",
            *keys.W_RANGE,
            step=keys.W_STEP,
            key=keys.weight_key(j),
            help=f"Raw weight of {layer_name(j, num_layers)}; s = softmax(w).",
        )
    st.slider(
        "γ (gamma)",
        *mixing.GAMMA_RANGE,
        step=0.1,
        key=keys.GAMMA,
        help="Overall scale of the mix. On the fixed-axes map each point is [x_k; γ·ELMo_k], what a task model "
        "receives in the paper (x_k: the word's context-free layer-0 vector), so γ weighs the context against "
        "x_k. γ multiplies every ELMo vector equally: it changes no cosine similarity, no neighbour and no UMAP, "
        "t-SNE or refitted PCA map.",
    )
    st.caption(gamma_line(ss.get(keys.PROJECTION, "live"), short=present))


def gamma_line(projection: str, short: bool = False) -> str:
    """The rail's one line on what γ does on the map shown (``short``: presentation mode's, one line of its type
    in the rail, so that the projection selector stays on a 1,024 x 768 screen)."""
    if projection == "live":
        if short:
            return "γ: context against x_k"
        return "γ weighs context against the word's own x_k: near 0 each spelling sits on one spot."
    return "γ: no effect on this map" if short else "γ changes no cosine, so not this map: the fixed axes show it."


def preset_buttons(num_layers: int) -> None:
    """Equal / top / layer 0 / reset: short labels, two to a row in the rail (the full name on hover)."""
    presets = (
        ("Equal weights", "Equal", "equal", None),
        ("Top layer only", "Top only", "top", None),
        ("Layer 0 only", "Layer 0", "bottom", None),
        ("Reset", "Reset", None, "Equal weights, γ = 1, no layer norm, automatic projection."),
    )
    cols = st.columns(2)
    for i, (label, short, preset, help_text) in enumerate(presets):
        click, args = (set_weights, (preset, num_layers)) if preset else (reset_controls, (num_layers,))
        cols[i % 2].button(
            short,
            on_click=click,
            args=args,
            key=keys.key(f"preset_{preset}" if preset else "reset"),
            width="stretch",
            help=help_text or label,
        )


def map_controls(present: bool = False) -> None:
    """Layer norm, the projection and the grey context words, in the rail under the weights (``present``:
    presentation mode's fewer controls, the projection only)."""
    if not present:
        st.checkbox(
            "layer norm",
            key=keys.LAYER_NORM,
            help="Normalise each layer of each sentence with one mean and variance over all its values "
            "(AllenNLP's do_layer_norm) before mixing.",
        )
    st.selectbox(
        "2-D projection",
        projections.PROJECTIONS,
        key=keys.PROJECTION,
        format_func=projections.PROJECTION_NAMES.get,
        help="fixed axes (live): [x_k; γ·ELMo_k] on two axes fitted once, redrawn in your browser while a slider "
        f"moves. Fitted to each mix (a linear preview moves while you drag): auto: PCA below "
        f"{projections.MIN_POINTS_FOR_UMAP} points (too few for UMAP to mean anything), else UMAP.",
    )
    if not present:
        st.checkbox(
            "other words in grey",
            key=keys.CONTEXT,
            help="Also place the sentences' other words on the map (projected together with the occurrences).",
        )


def fit_s(table: activations.TokenTable, occurrences: list[inputs.Occurrence]) -> None:
    """Button callback: the s that best separates the labelled senses (``app.explore.fit``) into the sliders, or,
    when the labels cannot support a fit (``fit.unsupported``), a warning that says why, the weights unchanged."""
    layers = table.layers(bool(ss.get(keys.LAYER_NORM)))[:, table.rows(occurrences)]
    labels = [o.label for o in occurrences]
    try:
        fit = fm.fit_mix(layers, labels)
    except ValueError as err:
        ss[keys.WEIGHTS_MESSAGE] = ("warning", str(err))
        return
    refusal = fm.unsupported(fit, labels)  # labels that cannot support a fit: say so, keep the weights
    if refusal:
        ss[keys.WEIGHTS_MESSAGE] = ("warning", refusal)
        return
    w = widgets.set_layer_weights(ss, fm.weights_for_s(fit.s, keys.W_RANGE, keys.W_STEP))
    s_set = mixing.softmax(w)
    ss[keys.WEIGHTS_MESSAGE] = ("success", fm.fit_message(fit, s_set, fm.accuracy(layers, labels, s_set)))


def layer_note(table: activations.TokenTable, occurrences: list[inputs.Occurrence], layer_norm: bool) -> str:
    """``app.explore.weight_effect.weight_note`` for these occurrences, kept while the table, occurrences and layer norm stay."""
    rows = table.rows(occurrences)
    key = (tuple(rows.tolist()), layer_norm)
    memo = ss.get(keys.private("layer_note"))
    if memo is not None and memo[0] is table and memo[1] == key:
        return memo[2]
    note = weight_effect.weight_note(weight_effect.layer_effect(table.layers(layer_norm)[:, rows]), layer_norm)
    ss[keys.private("layer_note")] = (table, key, note)
    return note


def fit_s_row(table: activations.TokenTable, occurrences: list[inputs.Occurrence]) -> None:
    """Under the presets: "Fit s to my labels" (when the occurrences carry two senses or more), what it or the
    Layer probes page set, and why moving a weight may change the map little here."""
    labels = [o.label for o in occurrences]
    if fm.can_fit(labels):
        st.button(
            "Fit s to my labels",
            key=keys.key("fit_s"),
            on_click=fit_s,
            args=(table, occurrences),
            width="stretch",
            help="Tries every s on a 0.1 grid and keeps the one whose mix gives the best leave-one-out "
            "nearest-neighbour accuracy on your sense labels (each occurrence takes the label of its "
            "nearest other occurrence), as the ELMo paper learns s for each task. γ changes no cosine.",
        )
    message = ss.pop(keys.WEIGHTS_MESSAGE, None)
    if message:
        getattr(st, message[0])(md(message[1]))
    note = layer_note(table, occurrences, bool(ss.get(keys.LAYER_NORM)))
    if note:
        st.caption(md(note))
