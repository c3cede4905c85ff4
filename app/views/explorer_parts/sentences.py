"""The page's top: the example sets and the sentences box (typed or uploaded text), the word picker, and the
word's concordance under the map."""

from __future__ import annotations

import streamlit as st

from app.explore import inputs
from app.explore.examples import EXAMPLE_SETS
from app.explore.text import plural
from app.render.display import kwic_table
from app.render.safe import md
from app.render.words import occurrence_lines, tokenization_rows, word_summary
from app.serving import caches, uploads
from app.session import keys, widgets
from app.views.explorer_parts.common import presenting, ss


# ---- callbacks (run before the script, so they may set widget state) --------------------------------------
def load_example(name: str) -> None:
    ss[keys.SENTENCES] = EXAMPLE_SETS[name].text
    ss[keys.WORD] = EXAMPLE_SETS[name].word
    ss[keys.private("upload_message")] = None
    ss[keys.SENTENCES_OPEN] = False  # the map comes up where the text was


def on_upload() -> None:
    file = ss.get(keys.UPLOAD)
    if file is None:
        ss[keys.private("upload_message")] = None
        return
    try:
        uploads.check_upload_size("sentences", file.size, file.name)
        text, note = inputs.text_for_box(inputs.decode_upload(file.getvalue(), file.name), file.name)
        ss[keys.SENTENCES] = text
        ss[keys.WORD] = None
        ss[keys.private("upload_message")] = None
        ss[keys.private("upload_note")] = note
        ss[keys.SENTENCES_OPEN] = False  # loaded: the map comes up where the text was
    except ValueError as err:  # the text box keeps what it had
        ss[keys.private("upload_message")] = str(err)


# ---- sections -------------------------------------------------------------------------------------------
HEAD = keys.key("head")  # presentation mode's one row: the example sets, the word, the closed sentences box


def input_section() -> tuple[inputs.ParsedInput, tuple | None]:
    """The example sets' buttons, and the sentences in a box that stays closed once a set is loaded (the map,
    not the text, is what the page is for); it opens for an empty box, and by a click to edit. In presentation
    mode the buttons, the word picker and the closed box share one row (the map starts high on a projector); the
    open box, which also holds the word's options there, takes the row under it. Returns the parsed text and,
    in presentation mode, where ``word_section`` draws (the picker's place in the row, the box for its options)."""
    if keys.SENTENCES_OPEN not in ss:  # a session's first run: open only when there is nothing to show
        ss[keys.SENTENCES_OPEN] = not (ss.get(keys.SENTENCES) or "").strip()
    present = presenting()
    if present:
        row = st.container(key=HEAD, horizontal=True, gap="xsmall", vertical_alignment="center")
        places = [row] * len(EXAMPLE_SETS)
    else:
        cols = st.columns([1.35] + [1] * len(EXAMPLE_SETS), vertical_alignment="center")
        cols[0].markdown("**1 · Sentences**")
        places = cols[1:]
    for place, (name, example) in zip(places, EXAMPLE_SETS.items()):
        place.button(
            name,
            key=keys.key(f"example_{name}"),
            help=example.title,
            on_click=load_example,
            args=(name,),
            width="content" if present else "stretch",
        )
    slot = None
    if present:  # the word after the sets, then the box: in the row while closed, full width once open
        slot = row.container(width=260, key=keys.key("word_slot"))
        box = (st if ss.get(keys.SENTENCES_OPEN) else row).expander(
            "Edit the sentences", key=keys.SENTENCES_OPEN, on_change="rerun"
        )
    else:
        box = st.expander(
            "Edit the sentences, type your own or upload a .txt file", key=keys.SENTENCES_OPEN, on_change="rerun"
        )
    with box:
        options = st.container() if slot is not None else None
        parsed = sentences_box()
    if ss.get(keys.private("upload_note")):  # outside the box, which a loaded file closes
        st.info(md(ss.pop(keys.private("upload_note"))))
    for note in parsed.notes:
        st.warning(md(note))
    return parsed, (slot, options) if slot is not None else None


def sentences_box() -> inputs.ParsedInput:
    left, right = st.columns([3, 1]) if not presenting() else (st.container(), None)
    if right is not None:
        with right:
            st.file_uploader(
                "…or upload a .txt file (one sentence per line)",
                type=["txt"],
                key=keys.UPLOAD,
                on_change=on_upload,
                max_upload_size=uploads.UPLOAD_LIMITS_MB["sentences"],
            )
            if ss.get(keys.private("upload_message")):
                st.error(md(ss[keys.private("upload_message")]))
    with left:
        st.text_area(
            "One sentence per line. Optional sense label in front: `[river] We sat on the bank.`",
            key=keys.SENTENCES,
            height=150 if presenting() else 230,
            max_chars=inputs.MAX_TEXT_CHARS,
            help=inputs.LABEL_HELP,
            placeholder="[river] We sat on the bank of the river.\n[money] I went to the bank to pay in a cheque.",
        )
    parsed = caches.parse_sentences(ss.get(keys.SENTENCES) or "")
    if parsed.lines and not presenting():
        with st.expander(f"Tokenization the model sees ({plural(len(parsed.lines), 'sentence')}, Moses tokenizer)"):
            st.dataframe(tokenization_rows(parsed.lines), hide_index=True, width="stretch")
    return parsed


def word_section(lines: list[inputs.Line], places: tuple | None = None) -> tuple[str, list[inputs.Occurrence]] | None:
    """The word picker and how often the word occurs (``places``: presentation mode's, from ``input_section``);
    its concordance is drawn under the map (``occurrences_section``)."""
    fold_case = bool(ss.get(keys.FOLD_CASE, True))
    counts = dict(inputs.word_counts(lines, fold_case))
    if not counts:
        st.warning("Your sentences contain no words (only punctuation or symbols): there is nothing to look at.")
        return None
    note = widgets.pick_word(ss, counts, lines, fold_case)
    if note:
        st.info(note)
    slot, options = places or (None, None)
    if slot is not None:  # presentation mode: the picker in the head's row, its options in the sentences' box
        left, right, summary = slot, options, options
    else:  # the count beside it, one row less above the map
        left, right, summary = st.columns([1.5, 1, 1.6], vertical_alignment="bottom")
    left.selectbox(
        "2 · Target word (type its first letters; most frequent first)",
        inputs.picker_order(counts.items()),
        key=keys.WORD,
        format_func=lambda w: f"{w}  ({counts.get(w, 0)}×)",
        filter_mode="prefix",
        label_visibility="collapsed" if slot is not None else "visible",
    )
    with right:
        st.checkbox(
            "treat case as the same word",
            key=keys.FOLD_CASE,
            help="Groups “Spring” and “spring” as one word for the occurrences, the map and the scores. "
            "The model always reads the sentences as written.",
        )
        st.checkbox(
            "include -s, -ed, -ing forms",
            key=keys.INFLECTIONS,
            help="Simple inflections (-s, -es, -ed, -ing), by crude suffix rules, not a lemmatizer: "
            "irregular forms (ran, mice) are not matched.",
        )
    word = ss[keys.WORD]
    inflections = bool(ss.get(keys.INFLECTIONS))
    occurrences = inputs.find_occurrences(lines, word, inflections, fold_case)
    if not occurrences:
        st.warning(
            f"“{md(word)}” does not occur in your sentences"
            f"{', with inflections' if inflections else ''}. Pick one of the words in the list."
        )
        return None
    summary.markdown(word_summary(word, occurrences)[0])  # its capitals note stands in the rail, by the sliders
    return word, occurrences


def occurrences_section(lines: list[inputs.Line], word: str, occurrences: list[inputs.Occurrence]) -> None:
    """The word's concordance, under the map and its views (the map's points carry the same sentences)."""
    st.markdown(f"**Occurrences of “{md(word)}”** (numbered as on the map and in the tables)")
    st.html(kwic_table(*occurrence_lines(occurrences, lines, chars=70), max_height_px=None if presenting() else 330))
