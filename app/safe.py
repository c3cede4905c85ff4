"""The one place that makes user text literal before the page renders it (docs/INPUT_RULES.md).

Every string that comes from a user, a link or a file (sentences, words, labels, example names, file and
dataset names, error messages that quote them) goes through ``md`` before it reaches anything Streamlit
renders as markdown (``st.markdown``, ``st.caption``, ``st.warning``/``info``/``error``/``success``, widget
labels), and through ``plot`` before it reaches plotly text that plotly renders as its pseudo-HTML (trace
names in the legend, tick labels, hover text, titles). Plain-text places (dataframes, ``st.text``,
selectbox options, ``st.code``) need neither.
"""
from __future__ import annotations

import html
import re

from elmo_core.text import clean_line

# Every ASCII punctuation character may be backslash-escaped in CommonMark, and each of these starts some
# markdown construct in Streamlit: emphasis, links and images, code, headings, lists, tables, HTML,
# entities (&), KaTeX ($), Streamlit's :color[...] / :material/...: directives, emoji shortcodes, GFM
# strikethrough (~) and autolinked URLs (":" and "." break "https://..." and "www....").
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&=^\"'@/])")


def md(text: object) -> str:
    """``text`` as markdown that renders as exactly these characters, on one line.

    Args:
        text: any object (``str()`` of it is used).
    Returns:
        str: control and format characters replaced as ``elmo_core.text.clean_line`` does (so a newline
        cannot start a heading or a list), every markdown-significant ASCII character backslash-escaped.
    """
    return _MD_SPECIAL.sub(r"\\\1", clean_line(str(text)))


def md_block(text: object) -> str:
    """Like ``md`` but keeps line breaks, as markdown hard breaks (for multi-line messages)."""
    return "  \n".join(md(line) for line in str(text).split("\n"))


def plot(text: object) -> str:
    """``text`` for plotly's pseudo-HTML (legend entries, tick labels, hover text, titles): ``<``, ``>`` and
    ``&`` become entities, so no tag (``<a href>``, ``<span style>``, ``<br>``) comes from the user."""
    return html.escape(clean_line(str(text)), quote=False)


def shown(markdown: object) -> str:
    """The text a string made with ``md`` shows: backslash escapes of ASCII punctuation removed (tests
    compare what the page shows, not its markdown source)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(markdown))
