"""What a user typed or uploaded, read into sentences, and the chosen word's occurrences in them (no Streamlit here).

The rules for lines, labels, tokens and limits are in docs/INPUT_RULES.md; ``tokenize`` is elmo_core's.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.explore.text import plural, visible
from elmo_core import is_form, same_case, word_forms

# ---- caps ------------------------------------------------------------------------------------------
MAX_LINES = 500  # sentences embedded per set
MAX_LINE_CHARS = 1000  # characters kept per line (the tokenizer is slow on huge lines)
MAX_TOKENS_PER_LINE = 100  # tokens kept per sentence
MAX_TOKEN_BYTES = 48  # the char-CNN reads the first 48 UTF-8 bytes of a token (ELMo max_characters_per_token 50 - 2)
MAX_URL_TEXT = 4000  # longer inputs are not put in the shareable link
MAX_LABEL_CHARS = 40  # characters between a label's brackets; a longer "[...]" stays part of the sentence, with a note
MAX_RAW_LINE_CHARS = MAX_LINE_CHARS + MAX_LABEL_CHARS + 4  # a line with its "[label] "
MAX_TEXT_CHARS = MAX_LINES * (MAX_RAW_LINE_CHARS + 1)  # the text box holds at most what can be used
_LABEL = re.compile(rf"^\s*\[([^\[\]]{{0,{MAX_LABEL_CHARS}}})\]\s*(.*)$", re.DOTALL)
_LONG_LABEL = re.compile(rf"^\s*\[[^\[\]]{{{MAX_LABEL_CHARS + 1},}}\]")  # looks like a label, but too long for one
LABEL_HELP = (
    f"A sense label is the text in square brackets at the start of a line, at most {MAX_LABEL_CHARS} "
    "characters: `[river] We sat on the bank.` Labels colour the map and score how well the senses "
    "separate. Longer bracketed text is read as part of the sentence, with a note."
)


# ---- input -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Line:
    """One input sentence: its text (label removed), optional sense label and the model's tokens."""

    text: str
    label: str | None
    tokens: tuple[str, ...]


@dataclass
class ParsedInput:
    lines: list[Line]
    notes: list[str] = field(default_factory=list)  # caps and oddities, shown to the user


def decode_upload(data: bytes, name: str = "file") -> str:
    """Text of an uploaded .txt file (UTF-8, BOM allowed; UTF-16 when it starts with a UTF-16 BOM).

    Raises:
        ValueError: the bytes are not UTF-8 text (e.g. a binary file), with a message for the user.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with a byte-order mark (e.g. Windows "Unicode")
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise ValueError(
                f"{name} starts like UTF-16 text but cannot be decoded as UTF-16; "
                "upload a UTF-8 .txt file with one sentence per line"
            ) from None
    if b"\x00" in data[:65536]:
        raise ValueError(f"{name} looks like a binary file (it contains NUL bytes); upload a UTF-8 .txt file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{name} is not UTF-8 text (byte {err.start + 1} of the file, value 0x{data[err.start]:02x}, "
            "cannot be decoded; perhaps Latin-1 or Windows-1252); "
            "upload a UTF-8 .txt file with one sentence per line"
        ) from None


def text_for_box(text: str, name: str = "the file") -> tuple[str, str]:
    """An uploaded text cut to what the explorer uses: the first ``MAX_LINES`` non-empty lines (as
    ``elmo_core.data.text`` defines lines), each at most ``MAX_RAW_LINE_CHARS`` characters.

    Returns:
        (text for the text box, a note for the user or ""). A long line whose sentence is still longer than
        ``MAX_LINE_CHARS`` in the box is not in the note: ``parse_input`` says that it was cut.

    Raises:
        ValueError: the file holds no text (empty, or blank lines only), with a message for the user: replacing
            the sentences with nothing would only lose them.
    """
    from elmo_core import clean_line, split_lines

    lines = [ln for ln in split_lines(text) if ln.strip()]
    if not any(clean_line(ln).strip() for ln in lines):  # invisible characters only count as nothing too
        raise ValueError(f"{name} holds no text (it is empty or has only blank lines); your sentences are unchanged")
    notes = []
    if len(lines) > MAX_LINES:
        notes.append(f"only the first {MAX_LINES} of its {len(lines):,} lines were read")
        lines = lines[:MAX_LINES]
    # A line cut here nearly always keeps a sentence over MAX_LINE_CHARS, which parse_input cuts again and reports
    # under the text box: this note only counts the cuts parse_input cannot see (the line's label, spaces or
    # invisible characters took the room), so each cut is reported once.
    unseen = sum(
        len(parse_label(clean_line(ln[:MAX_RAW_LINE_CHARS]))[1]) <= MAX_LINE_CHARS
        for ln in lines
        if clean_line(ln[MAX_RAW_LINE_CHARS:]).strip()
    )
    if unseen:
        notes.append(
            f"{plural(unseen, 'line was', 'lines were')} cut to {'its' if unseen == 1 else 'their'} first "
            f"{MAX_RAW_LINE_CHARS:,} characters"
        )
    lines = [ln[:MAX_RAW_LINE_CHARS] for ln in lines]
    return "\n".join(lines), (f"From {name}: " + "; ".join(notes) + ".") if notes else ""


def fit_budget(lines: Sequence[Line], max_tokens: int) -> tuple[list[Line], str]:
    """The first sentences whose tokens together stay within ``max_tokens`` (a session's memory bound).

    Returns:
        (kept lines, a note for the user or "").
    """
    total, kept = 0, []
    for line in lines:
        if total + len(line.tokens) > max_tokens:
            break
        total += len(line.tokens)
        kept.append(line)
    if len(kept) == len(lines):
        return list(lines), ""
    return kept, (
        f"Only the first {len(kept)} of {len(lines)} sentences are used: together they have "
        f"{total:,} tokens, the most one session may keep for this model (its vectors take memory "
        "on the server; ELMO_EXPLORER_SESSION_MB)."
    )


def tokens_in_budget(budget_bytes: int, num_layers: int, dim: int) -> int:
    """How many tokens' activations fit in ``budget_bytes``: float32 (L + 1, D) per token, twice (the token
    table and its layer-normed copy)."""
    return budget_bytes // (num_layers * dim * 4 * 2)


def parse_label(raw: str) -> tuple[str | None, str]:
    """``"[river] We sat on the bank."`` -> ``("river", "We sat on the bank.")``; no label -> ``(None, raw)``."""
    m = _LABEL.match(raw)
    if not m:
        return None, raw.strip()
    label = " ".join(m.group(1).split()) or None
    return label, m.group(2).strip()


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


def parse_input(
    text: str, tokenizer: Callable[[str], list[str]] | None = None, max_lines: int = MAX_LINES
) -> ParsedInput:
    """Split the text box into labelled, tokenized sentences (one per non-empty line), applying the caps.

    Args:
        text: raw text, one sentence per line, each optionally starting with ``[label]``.
        tokenizer: str -> tokens; default ``elmo_core.data.tokenize`` (Moses, as in ELMo's training data).
        max_lines: keep at most this many sentences.
    """
    if tokenizer is None:
        from elmo_core import tokenize as tokenizer
    from elmo_core import clean_line, split_lines

    numbered = [(i, ln) for i, ln in enumerate((clean_line(raw) for raw in split_lines(text)), 1) if ln.strip()]
    notes: list[str] = []
    if len(numbered) > max_lines:
        notes.append(f"Only the first {max_lines} of {len(numbered)} lines are used (cap of {max_lines} sentences).")
        numbered = numbered[:max_lines]
    lines: list[Line] = []
    long_lines = cut_lines = label_only = 0
    long_tokens: list[str] = []
    long_labels: list[tuple[int, str]] = []  # (line number in the text, the bracketed text) read as sentence
    for number, raw in numbered:
        label, sentence = parse_label(raw)
        if label is None and (m := _LONG_LABEL.match(raw)):
            long_labels.append((number, m.group(0).strip()))
        if len(sentence) > MAX_LINE_CHARS:
            sentence, long_lines = sentence[:MAX_LINE_CHARS], long_lines + 1
        tokens = tokenizer(sentence)
        if not tokens:
            label_only += 1
            continue
        if len(tokens) > MAX_TOKENS_PER_LINE:
            tokens, cut_lines = tokens[:MAX_TOKENS_PER_LINE], cut_lines + 1
        long_tokens += [t for t in tokens if len(t.encode("utf-8")) > MAX_TOKEN_BYTES]
        lines.append(Line(sentence, label, tuple(tokens)))
    if long_lines:
        notes.append(f"{plural(long_lines, 'line')} longer than {MAX_LINE_CHARS:,} characters {_were(long_lines)} cut.")
    if cut_lines:
        notes.append(
            f"{plural(cut_lines, 'sentence')} longer than {MAX_TOKENS_PER_LINE} tokens {_were(cut_lines)} cut."
        )
    if label_only:
        notes.append(f"{plural(label_only, 'line')} had a label but no sentence and {_were(label_only)} skipped.")
    if long_tokens:
        example = long_tokens[0] if len(long_tokens[0]) <= 30 else long_tokens[0][:30] + "…"
        notes.append(
            f"{plural(len(long_tokens), 'token is', 'tokens are')} longer than {MAX_TOKEN_BYTES} UTF-8 bytes (e.g. '{example}'): "
            f"the char-CNN reads only their first {MAX_TOKEN_BYTES} bytes, as the original ELMo does."
        )
    if long_labels:
        notes.append(long_label_note(long_labels))
    return ParsedInput(lines, notes)


def long_label_note(long_labels: Sequence[tuple[int, str]]) -> str:
    """The note for lines that start with a bracketed text too long to be a label ((line number, "[text]") each):
    they say which lines, quote the first, and that it was read as part of the sentence."""
    numbers = [str(n) for n, _ in long_labels]
    first = long_labels[0][1]
    quoted = f"'{visible(first if len(first) <= 50 else first[:46] + '…]')}'"
    if len(numbers) == 1:
        what = f"Line {numbers[0]}: {quoted} is"
    else:
        listed = (
            f"{', '.join(numbers[:-1])} and {numbers[-1]}"
            if len(numbers) <= 5
            else f"{', '.join(numbers[:5])} and {len(numbers) - 5} more"
        )
        what = f"Lines {listed}: their bracketed text (e.g. {quoted}) is"
    return (
        f"{what} longer than {MAX_LABEL_CHARS} characters, so it was read as part of the sentence, not as a "
        f"label. Shorten it to {MAX_LABEL_CHARS} characters or fewer to use it as a label."
    )


# ---- words and occurrences ------------------------------------------------------------------------
_STOPWORDS = frozenset(
    "a an the and or but of to in on at by for with from as is are was were be been being it its this that "
    "these those he she they we you i me him her them us my your his our their not no do does did have has had "
    "will would can could should may might must shall there here then than so if when while what which who whom "
    "how all any each some such into onto over under about after before up down out off again very just also "
    "'s n't".split()
)


@functools.lru_cache(maxsize=65536)  # called per token on every slider move (neighbour candidates)
def is_wordlike(token: str) -> bool:
    """True when the token has at least one letter or digit (any script)."""
    return any(ch.isalnum() for ch in token)


def word_counts(lines: Sequence[Line], fold_case: bool = True) -> list[tuple[str, int]]:
    """(word, count) for every word-like token, most frequent first, then alphabetical. With ``fold_case``
    the words are case-folded ("The" and "the" are one word), else spelled as written."""
    fold = str.casefold if fold_case else str
    counts = Counter(fold(t) for line in lines for t in line.tokens if is_wordlike(t))
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def picker_order(counts: Sequence[tuple[str, int]]) -> list[str]:
    """The word picker's options: most frequent first, except that a word comes before every longer word that
    starts with it, so a prefix filter shows the exact match first (typing "the" lists "the" before "then"
    and "there", and Enter picks it), then the other matches by frequency.

    Args:
        counts: (word, count), most frequent first (``word_counts``).
    """
    known = {word for word, _ in counts}
    out: list[str] = []
    placed: set[str] = set()
    for word, _ in counts:
        for end in range(1, len(word) + 1):  # its shorter words first, shortest first
            prefix = word[:end]
            if prefix in known and prefix not in placed:
                placed.add(prefix)
                out.append(prefix)
    return out


def suggest_word(lines: Sequence[Line], fold_case: bool = True) -> str | None:
    """The most frequent non-stopword that occurs at least twice (else the most frequent word)."""
    counts = word_counts(lines, fold_case)
    for word, n in counts:
        if n >= 2 and word.casefold() not in _STOPWORDS:
            return word
    return counts[0][0] if counts else None


def map_word(lines: Sequence[Line], fold_case: bool = True, min_count: int = 2) -> str | None:
    """The word a sentence set is about, among the non-stopwords that occur at least ``min_count`` times: with
    sense labels, the one in the most labelled lines (then the most frequent), else the most frequent; ties
    alphabetical. None when no such word occurs that often."""
    fold = str.casefold if fold_case else str
    counts = word_counts(lines, fold_case)
    labelled = Counter(w for line in lines if line.label for w in {fold(t) for t in line.tokens if is_wordlike(t)})
    frequent = [(w, n) for w, n in counts if n >= min_count and w.casefold() not in _STOPWORDS]
    if not frequent:
        return None
    return min(frequent, key=lambda wn: (-labelled[wn[0]], -wn[1], wn[0]))[0]


def spellings(occurrences: Sequence[Occurrence]) -> list[str]:
    """The distinct spellings of the occurrences as written, most frequent first ("Spring", "spring")."""
    counts = Counter(o.token for o in occurrences)
    return [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@dataclass(frozen=True)
class Occurrence:
    line: int  # index into the parsed lines
    position: int  # token index within the line
    token: str  # the token as written
    label: str | None


def find_occurrences(
    lines: Sequence[Line], word: str, inflections: bool = False, fold_case: bool = True
) -> list[Occurrence]:
    """Every token that counts as ``word`` (``elmo_core.data.wordforms``: ignoring case and a possessive ending,
    whole tokens; with ``inflections`` also its regular noun and verb forms), in reading order. Without
    ``fold_case`` a token must also have the word's capitals as typed (``wordforms.same_case``: "Spring"
    finds "Spring" and "Springs", not "spring" or "SPRING"). This only groups tokens: the biLM always reads
    them as written."""
    forms = word_forms(word, inflections=inflections)
    return [
        Occurrence(i, j, tok, line.label)
        for i, line in enumerate(lines)
        for j, tok in enumerate(line.tokens)
        if is_form(tok, forms) and (fold_case or same_case(tok, word))
    ]


def highlight_parts(tokens: Sequence[str], position: int, window: int | None = None) -> tuple[str, str, str]:
    """(before, word, after) as detokenized-ish text, for highlighting the word in a sentence.

    ``window`` keeps at most that many tokens on each side (with "…").
    """
    lo, hi = 0, len(tokens)
    if window is not None:
        lo, hi = max(0, position - window), min(len(tokens), position + window + 1)
    before = " ".join(tokens[lo:position])
    after = " ".join(tokens[position + 1 : hi])
    if lo > 0:
        before = "… " + before
    if hi < len(tokens):
        after = after + " …"
    return before, tokens[position], after
