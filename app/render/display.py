"""Concordance lines as the explorer shows them, without Streamlit: an HTML table and a short HTML list.

A concordance line (keyword in context, KWIC) puts the left context right-aligned against the target, the
target, then the right context, so the target is always visible and stands in one column, whatever the
width: the contexts are cut at token boundaries to a character budget (with "…"), and the HTML table clips
the left context on its left side and the right context on its right side when the column is narrower still.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.explore.text import ELLIPSIS, Kwic
from app.render.safe import html_text

CSS = """
<style>
.kwic-wrap{border:1px solid rgba(128,128,128,.3);border-radius:6px;margin-bottom:.5rem;overflow:hidden}
.kwic-head{overflow:hidden;scrollbar-gutter:stable;border-bottom:1px solid rgba(128,128,128,.3)}
.kwic-body{overflow-y:auto;scrollbar-gutter:stable}
table.kwic{width:100%;table-layout:fixed;border-collapse:collapse;font-size:.9rem;line-height:1.5;margin:0;
  color:inherit;background:transparent}
table.kwic td,table.kwic th{padding:2px 6px;border:none;white-space:nowrap;overflow:hidden;vertical-align:top;
  color:inherit;background:transparent}
table.kwic th{font-weight:600;text-align:left;font-size:.8rem;opacity:.75}
table.kwic tbody tr:nth-child(even) td{background:rgba(128,128,128,.08)}
table.kwic td.l{direction:rtl;text-align:right;text-overflow:ellipsis}
table.kwic td.l>span{direction:ltr;unicode-bidi:isolate}
table.kwic td.t{text-align:center;padding:2px 2px}
table.kwic td.t mark{background:#ffd54f;color:#000;padding:0 3px;border-radius:3px;font-weight:600}
table.kwic td.r{text-align:left;text-overflow:ellipsis}
table.kwic td.n{opacity:.7;font-size:.8rem;text-align:right}
table.kwic td.lab span{background:#e8eefc;color:#1f4bb4;border-radius:4px;padding:0 5px;font-size:.8rem}
table.kwic td.c{font-variant-numeric:tabular-nums;text-align:right}
</style>
"""


def kwic_table(
    lines: Sequence[Kwic],
    columns: Sequence[tuple[str, str, Sequence[str]]] = (),
    max_height_px: int | None = None,
    caption: str = "",
) -> str:
    """An HTML concordance table: optional leading columns, then left context | target | right context.

    Args:
        lines: one ``Kwic`` per row.
        columns: (header, kind, values) per leading column, kind "n" (a number such as #3), "lab" (a sense
            label), "c" (a cosine) or "" (plain); every value is escaped (``app.render.safe.html_text``).
        max_height_px: scroll inside the table beyond this height (None: no limit).
    Returns: the HTML (the CSS included); nothing in it comes unescaped from the input.
    """
    widths = {"n": 4, "lab": 10, "c": 6, "": 10}
    target_ch = min(max((len(k.target) for k in lines), default=4) + 2, 24)
    col_defs = [f'<col style="width:{max(widths.get(kind, 10), len(head) + 2)}ch">' for head, kind, _ in columns]
    col_defs += ['<col style="width:50%">', f'<col style="width:{target_ch}ch">', '<col style="width:50%">']
    head = "".join(f"<th>{html_text(h)}</th>" for h, _, _ in columns)
    head += (
        '<th style="text-align:right">left context</th><th style="text-align:center">word</th><th>right context</th>'
    )
    rows = []
    for i, line in enumerate(lines):
        cells = []
        for _, kind, values in columns:
            value = html_text(str(values[i]))
            if kind == "lab":
                value = f"<span>{value}</span>" if value else ""
            cells.append(f'<td class="{kind}">{value}</td>')
        cells.append(f'<td class="l"><span>{html_text(line.left)}</span></td>')
        cells.append(f'<td class="t"><mark>{html_text(line.target)}</mark></td>')
        cells.append(f'<td class="r">{html_text(line.right)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    colgroup = f"<colgroup>{''.join(col_defs)}</colgroup>"
    cap = f"<caption>{html_text(caption)}</caption>" if caption else ""
    thead, tbody = f"<thead><tr>{head}</tr></thead>", f"<tbody>{''.join(rows)}</tbody>"
    if not max_height_px:
        return f'{CSS}<div class="kwic-wrap"><table class="kwic">{cap}{colgroup}{thead}{tbody}</table></div>'
    # A scrolling table keeps its header in a table of its own above the scrolling body (same columns, same
    # scrollbar gutter), not a sticky header: a sticky one needs an opaque background, and no colour fits
    # both Streamlit's light and dark themes.
    return (
        f'{CSS}<div class="kwic-wrap"><div class="kwic-head"><table class="kwic">{cap}{colgroup}{thead}</table>'
        f'</div><div class="kwic-body" style="max-height:{int(max_height_px)}px"><table class="kwic">{colgroup}'
        f"{tbody}</table></div></div>"
    )


LIST_CSS = """
<style>
.kwl{font-size:.9rem;line-height:1.4;margin-bottom:.5rem}
.kwl>div{padding:2px 0;border-bottom:1px solid rgba(128,128,128,.15)}
.kwl mark{background:#ffd54f;color:#000;padding:0 3px;border-radius:3px;font-weight:600}
.kwl .n,.kwl .c{opacity:.75;font-variant-numeric:tabular-nums;margin-right:6px}
.kwl .lab{background:#e8eefc;color:#1f4bb4;border-radius:4px;padding:0 5px;font-size:.8rem;margin-right:6px}
</style>
"""


def _clip(text: str, chars: int, keep_end: bool) -> str:
    """``text`` cut to about ``chars`` characters at a space, from its start (``keep_end``: from its end), with "…"."""
    if len(text) <= chars:
        return text
    if keep_end:
        cut = text[-chars:]
        return ELLIPSIS + (cut.split(" ", 1)[1] if " " in cut[:-1] else cut)
    cut = text[:chars]
    return (cut.rsplit(" ", 1)[0] if " " in cut[1:] else cut) + ELLIPSIS


def kwic_list(lines: Sequence[Kwic], columns: Sequence[tuple[str, str, Sequence[str]]] = (), chars: int = 30) -> str:
    """Concordance lines for a narrow column: one short wrapped line each, its leading values first (kinds as in
    ``kwic_table``: "n", "lab", "c"), then about ``chars`` characters of context on each side of the marked
    target. A table's clipped contexts would leave a few letters there. Every value is escaped."""
    rows = []
    for i, line in enumerate(lines):
        lead = "".join(
            f'<span class="{kind}">{html_text(str(values[i]))}</span>' for _, kind, values in columns if str(values[i])
        )
        rows.append(
            f"<div>{lead}{html_text(_clip(line.left, chars, keep_end=True))} "
            f"<mark>{html_text(line.target)}</mark> {html_text(_clip(line.right, chars, keep_end=False))}"
            "</div>"
        )
    return f'{LIST_CSS}<div class="kwl">{"".join(rows)}</div>'
