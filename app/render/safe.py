"""The one place that makes user text literal before the page renders it (docs/INPUT_RULES.md): one function per
context, and every user string passes the one of the context it enters.

Every string that comes from a user, a link or a file (sentences, words, labels, example names, file and
dataset names, error messages that quote them) goes through ``md`` before it reaches anything Streamlit
renders as markdown (``st.markdown``, ``st.caption``, ``st.warning``/``info``/``error``/``success``, widget
labels, ``st.table`` cells), and through ``plot`` before it reaches plotly text that plotly renders as its pseudo-HTML (trace
names in the legend, tick labels, hover text, titles), and through ``vega`` before it reaches a Vega-Lite chart
(the contexts map: text drawn as text, the tooltip escaped by Vega), through ``html_text`` before it reaches
HTML that the page or a file shows (``st.html``, the concordance tables), through ``script_json`` when a value is
written into an inline ``<script>`` (the HTML map export's spec), and through ``latex`` before it reaches KaTeX
(``st.latex``; markdown's ``$...$`` is escaped by ``md``). Plain-text places (dataframes, ``st.text``,
selectbox options, ``st.code``) need neither. A message that quotes a user's word or label puts it through
``app.explore.text.visible`` first, so an invisible character in it (a zero-width space) shows as its escape instead of vanishing.
A message of the library that names the server's folders goes through ``app.explore.text.hide_paths`` before a visitor sees it,
unless the operator allows server paths (``ELMO_EXPLORER_ALLOW_SERVER_PATHS=1``).
"""

from __future__ import annotations

import html
import json
import re

from elmo_core import clean_line

# Every ASCII punctuation character may be backslash-escaped in CommonMark, and each of these starts some
# markdown construct in Streamlit: emphasis, links and images, code, headings, lists, tables, HTML,
# entities (&), KaTeX ($), Streamlit's :color[...] / :material/...: directives, emoji shortcodes, GFM
# strikethrough (~) and autolinked URLs (":" and "." break "https://..." and "www....").
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&=^\"'@/])")
# Streamlit's GFM autolinks ("https://...", "www....", "mailto:", "a@b.org") are found in the text after
# markdown escapes are resolved, so escaping cannot stop them: an invisible WORD JOINER (U+2060) goes before
# the ":" of a scheme, the "." after "www" and every "@". It shows nothing and breaks no line.
_AUTOLINK = re.compile(r"(?<=[A-Za-z])(?=:)|(?<=[Ww]{3})(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def md(text: object) -> str:
    """``text`` as markdown that renders as exactly these characters, on one line.

    Args:
        text: any object (``str()`` of it is used).
    Returns:
        str: control and format characters replaced as ``elmo_core.data.text.clean_line`` does (so a newline
        cannot start a heading or a list), a word joiner where a URL or e-mail address would be autolinked,
        every markdown-significant ASCII character backslash-escaped.
    """
    return _MD_SPECIAL.sub(r"\\\1", _AUTOLINK.sub(WORD_JOINER, clean_line(str(text))))


def md_with_code(text: object) -> str:
    """One of this project's own messages as markdown: the spans it puts between backticks (commands, such as
    ``elmo_core.data.wordnet.PREPARE_HINT``'s) show as code, the rest as ``md`` shows it. Never for user text: a
    message with unpaired backticks is shown literally by ``md``."""
    parts = clean_line(str(text)).split("`")
    if len(parts) % 2 == 0:
        return md(text)
    return "".join(md(part) if k % 2 == 0 else f"`{part}`" for k, part in enumerate(parts))


def plot(text: object) -> str:
    """``text`` for plotly's pseudo-HTML (legend entries, tick labels, hover text, titles): ``<``, ``>`` and
    ``&`` become entities, so no tag (``<a href>``, ``<span style>``, ``<br>``) comes from the user."""
    return html.escape(clean_line(str(text)), quote=False)


def vega(text: object) -> str:
    """``text`` for a Vega-Lite chart (``app.render.map_chart``: title, legend, hover): Vega draws it as text and its
    tooltip escapes it, so only control and format characters are replaced (``clean_line``), no entities."""
    return clean_line(str(text))


def shown(markdown: object) -> str:
    """The text a string made with ``md`` shows: backslash escapes of ASCII punctuation removed (tests
    compare what the page shows, not its markdown source)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(markdown)).replace(WORD_JOINER, "")


def html_text(text: object) -> str:
    """``text`` for HTML element text or a quoted attribute value: control and format characters replaced
    (``clean_line``; a right-to-left override cannot reorder what follows), ``& < > " '`` as entities."""
    return html.escape(clean_line(str(text)), quote=True)


# In an inline <script>, "</script" ends the element and "<!--" changes how it ends, whatever JavaScript quoting
# says; U+2028/2029 end a line in older JavaScript. As \u escapes they are the same characters inside JSON strings.
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_UNSAFE_RE = re.compile("[<>&\u2028\u2029]")


def script_json(value: object) -> str:
    """``value`` as JSON to write into an inline ``<script>`` element: ``json.dumps`` (compact) with ``<``, ``>``,
    ``&``, U+2028 and U+2029 as ``\\u`` escapes, so no string in it can end the script, open a comment or break a
    line; ``json.loads`` (or JavaScript) reads the same value back."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SCRIPT_UNSAFE_RE.sub(lambda m: _SCRIPT_UNSAFE[m.group(0)], text)


# KaTeX: every character that starts a command, a group, math, an alignment, a comment or a sub/superscript.
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    **{ch: "\\" + ch for ch in "{}$&#%_"},
}
_LATEX_SPECIAL_RE = re.compile(r"[\\~^{}$&#%_]")


def latex(text: object) -> str:
    """``text`` for KaTeX text mode (inside ``\\text{...}`` of ``st.latex``): control and format characters
    replaced (``clean_line``), each LaTeX-special character (``\\ { } $ & # % _ ~ ^``) written as its literal
    command, so no ``\\href``, ``\\url`` or math comes from the user."""
    return _LATEX_SPECIAL_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], clean_line(str(text)))
