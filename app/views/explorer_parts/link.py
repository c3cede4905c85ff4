"""The page's link: the view kept in the URL (a shared link reopens it), and the "Copy link" row in the rail."""

from __future__ import annotations

import urllib.parse

import streamlit as st

from app.explore.controls import Controls
from app.explore.examples import find_example
from app.render import safe
from app.serving import models
from app.session import keys, widgets
from app.session import link as url
from app.views.explorer_parts.common import ss


def model_in_link(model: models.LoadedModel) -> str:
    """The named model a link carries: the model panel's choice (bundled or published), else the startup
    model's name (an uploaded model cannot travel in a link)."""
    return ss.get(models.BUNDLED_CHOICE_KEY) or models.startup_name() or "default"


def current_view(num_layers: int, model: models.LoadedModel) -> Controls:
    example = find_example(ss.get(keys.SENTENCES) or "")
    return widgets.controls_of(ss, num_layers, example.name if example else None, model_in_link(model))


def sync_url(num_layers: int, model: models.LoadedModel) -> None:
    """Keep the view in the URL (a shared link reopens it) and remember it for when widgets are not shown."""
    view = current_view(num_layers, model)
    ss[keys.LAST] = view
    params = url.to_query(view, models.startup_name() or "default")
    if params != {k: st.query_params[k] for k in st.query_params}:
        st.query_params.from_dict(params)


def link_of(view: Controls) -> str:
    """The full link of ``view`` (the address the browser shows once the URL is synced)."""
    base = (st.context.url or "").split("?")[0]
    return f"{base}?{urllib.parse.urlencode(url.to_query(view, models.startup_name() or 'default'))}"


def share_row(model: models.LoadedModel, num_layers: int) -> None:
    """The "Copy link" button and, under it, what a link cannot carry."""
    view = current_view(num_layers, model)
    link = link_of(view)
    notes = url.link_notes(view, model.key, model.display_name, ss)
    copy_button(link)
    st.caption(
        " ".join(notes)
        or "The link holds this view: sentences, word, every control, the tab and the "
        "model's name; it draws the same map in any browser."
    )


def copy_button(link: str) -> None:
    """A button that copies ``link`` to the clipboard. The HTML is ours; the link (user text: sentences, word)
    enters only as a JSON string literal (``safe.script_json``), so it can end neither the string nor the script."""
    data = safe.script_json(link)
    st.iframe(
        "<style>html,body{margin:0;overflow:hidden}button{font:14px sans-serif;padding:6px 12px;white-space:nowrap;"
        "border:1px solid #ccc;border-radius:8px;background:#fff;cursor:pointer}"
        "button:hover{border-color:#ff4b4b;color:#ff4b4b}span{font:13px sans-serif;color:#555;margin-left:6px}</style>"
        "<button id='copy' title='Copy the link of this view'>Copy link</button><span id='done'></span>"
        f"<script>const link = {data};"
        "document.getElementById('copy').onclick = async () => {"
        "  const done = document.getElementById('done');"
        "  try { await navigator.clipboard.writeText(link); done.textContent = 'copied'; }"
        "  catch (e) { const t = document.createElement('textarea'); t.value = link; document.body.appendChild(t);"
        "    t.select(); const ok = document.execCommand('copy'); t.remove();"
        "    done.textContent = ok ? 'copied' : 'copy it from the address bar'; }"
        "};</script>",
        height=40,
        width="stretch",
    )
