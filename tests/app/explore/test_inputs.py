"""app/explore/inputs.py, the explorer's inputs without Streamlit.

Expected values are worked out by hand in the comments, or follow from the definitions (softmax, cosine,
Procrustes) on small arrays built for the purpose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

from app.explore import activations, inputs, neighbours  # noqa: E402


def split(text: str) -> list[str]:
    return text.split()


# ---- words and occurrences ---------------------------------------------------------------------------------------
LINES = [
    inputs.Line("", "a", ("The", "Bank", "is", "open", ".")),
    inputs.Line("", "b", ("banks", "and", "the", "bank", "banked", "banking")),
    inputs.Line("", None, ("The", "river", ".")),
]


# ---- input parsing ------------------------------------------------------------------------------------------
def test_parse_labels_and_tokens():
    parsed = inputs.parse_input(
        "[river] We sat on the bank .\n\n  plain line here \n[ money ]I went to the bank", tokenizer=split
    )
    assert [ln.label for ln in parsed.lines] == ["river", None, "money"]
    assert parsed.lines[0].tokens == ("We", "sat", "on", "the", "bank", ".")
    assert parsed.lines[0].text == "We sat on the bank ."
    assert parsed.lines[2].tokens == ("I", "went", "to", "the", "bank")
    assert parsed.notes == []


def test_parse_label_edge_cases():
    assert inputs.parse_label("[] no label") == (None, "no label")
    assert inputs.parse_label("[a b]  x") == ("a b", "x")
    assert inputs.parse_label("not [a] label") == (None, "not [a] label")
    parsed = inputs.parse_input("[lonely]\n[x] ok", tokenizer=split)
    assert len(parsed.lines) == 1 and "label but no sentence" in parsed.notes[0]


def test_a_label_longer_than_the_limit_is_read_as_sentence_with_a_note():
    limit = "x" * inputs.MAX_LABEL_CHARS
    assert inputs.MAX_LABEL_CHARS == 40 and inputs.parse_label(f"[{limit}] the bank") == (limit, "the bank")
    long = "financial institution where money is kept"  # 42 characters
    text = f"[river] the bank\n\n[{long}] my bank\n[{limit}] a bank"
    parsed = inputs.parse_input(text, tokenizer=split)
    assert [(ln.label, ln.text) for ln in parsed.lines] == [
        ("river", "the bank"),
        (None, f"[{long}] my bank"),
        (limit, "a bank"),
    ]
    # the line number counts the empty line, as the text box shows it
    assert parsed.notes == [
        f"Line 3: '[{long}]' is longer than 40 characters, so it was read as part of the "
        "sentence, not as a label. Shorten it to 40 characters or fewer to use it as a label."
    ]
    many = inputs.parse_input("\n".join(f"[{'ab ' * 20}] bank {i}" for i in range(7)), tokenizer=split)
    first = "[" + ("ab " * 20)[:45] + "…]"  # the first one, cut
    assert many.notes == [
        f"Lines 1, 2, 3, 4, 5 and 2 more: their bracketed text (e.g. '{first}') is longer than "
        "40 characters, so it was read as part of the sentence, not as a label. Shorten it to 40 "
        "characters or fewer to use it as a label."
    ]
    assert "at most 40 characters" in inputs.LABEL_HELP  # the text box's help states the limit


def test_parse_caps_lines_tokens_and_long_tokens():
    text = "\n".join(f"line {i}" for i in range(1200))
    parsed = inputs.parse_input(text, tokenizer=split, max_lines=500)
    assert len(parsed.lines) == 500
    assert parsed.lines[-1].tokens == ("line", "499")
    assert "first 500 of 1200" in parsed.notes[0]

    long = inputs.parse_input(" ".join(["w"] * 150), tokenizer=split)
    assert len(long.lines[0].tokens) == inputs.MAX_TOKENS_PER_LINE
    assert any("longer than 100 tokens" in n for n in long.notes)

    sixty = inputs.parse_input("a " + "x" * 60 + " b", tokenizer=split)
    assert sixty.lines[0].tokens[1] == "x" * 60  # kept; the char-CNN truncates it itself
    assert any("48 UTF-8 bytes" in n for n in sixty.notes)
    # 13 emoji = 52 bytes: also over the byte limit although only 13 characters
    assert any("48 UTF-8 bytes" in n for n in inputs.parse_input("😀" * 13, tokenizer=split).notes)


def test_parse_with_moses_tokenizer_non_latin_and_emoji():
    parsed = inputs.parse_input("[x] Don't go to the bank 😀.\nПривет, мир.\n日本語です")
    assert parsed.lines[0].tokens == ("Don", "'t", "go", "to", "the", "bank", "😀", ".")
    assert parsed.lines[1].tokens == ("Привет", ",", "мир", ".")
    assert "".join(parsed.lines[2].tokens) == "日本語です"  # Moses splits CJK into characters


def test_decode_upload():
    assert inputs.decode_upload("[a] x\n".encode("utf-8-sig")) == "[a] x\n"
    with pytest.raises(ValueError, match="binary"):
        inputs.decode_upload(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(ValueError, match="not UTF-8 text \\(byte 4 of the file, value 0xe9"):
        inputs.decode_upload(b"caf\xe9")  # 1-based: c a f é
    text = "[a] café bank\n[b] river bank\n"
    assert inputs.decode_upload(text.encode("utf-16")) == text  # BOM + UTF-16 (little-endian here)
    assert inputs.decode_upload(b"\xfe\xff" + text.encode("utf-16-be")) == text


def test_word_counts_and_suggestion():
    counts = dict(inputs.word_counts(LINES))
    assert counts["the"] == 3 and counts["bank"] == 2 and "." not in counts
    assert inputs.word_counts(LINES)[0] == ("the", 3)
    assert inputs.suggest_word(LINES) == "bank"  # "the" is a stopword


def test_find_occurrences_case_insensitive_and_inflections():
    occ = inputs.find_occurrences(LINES, "BANK")
    assert [(o.line, o.position, o.token, o.label) for o in occ] == [(0, 1, "Bank", "a"), (1, 3, "bank", "b")]
    occ = inputs.find_occurrences(LINES, "bank", inflections=True)
    assert [o.token for o in occ] == ["Bank", "banks", "bank", "banked", "banking"]
    assert inputs.find_occurrences(LINES, "absent") == []


def test_highlight_parts():
    toks = ("a", "b", "c", "d", "e")
    assert inputs.highlight_parts(toks, 2) == ("a b", "c", "d e")
    assert inputs.highlight_parts(toks, 2, window=1) == ("… b", "c", "d …")


# ---- export and the URL view -------------------------------------------------------------------------------------
def test_picker_puts_the_exact_word_before_longer_words_then_frequency():
    counts = [("then", 30), ("the", 449), ("there", 5), ("bank", 12), ("battle", 50), ("bat", 3), ("them", 5)]
    counts.sort(key=lambda kv: (-kv[1], kv[0]))  # as word_counts gives them
    order = inputs.picker_order(counts)
    assert sorted(order) == sorted(w for w, _ in counts)  # every word once
    # what a prefix filter shows when one types "the" or "bat": the word itself, then the others by frequency
    assert [w for w in order if w.startswith("the")] == ["the", "then", "them", "there"]
    assert [w for w in order if w.startswith("bat")] == ["bat", "battle"]
    assert order[0] == "the"  # no typing: the most frequent word first
    lines = inputs.parse_input("Then the dog saw the cat .\nThe end , then .").lines
    assert inputs.picker_order(inputs.word_counts(lines))[:2] == ["the", "then"]


def test_case_grouping_decides_which_tokens_are_the_word():
    lines = inputs.parse_input("Spring came early .\nIn spring the river rose .\nThe spring broke .\nSPRING sale").lines
    folded = inputs.find_occurrences(lines, "spring")
    assert [o.token for o in folded] == ["Spring", "spring", "spring", "SPRING"]
    exact = inputs.find_occurrences(lines, "spring", fold_case=False)
    assert [(o.line, o.token) for o in exact] == [(1, "spring"), (2, "spring")]
    assert [o.token for o in inputs.find_occurrences(lines, "Spring", fold_case=False)] == ["Spring"]
    assert inputs.spellings(folded) == ["spring", "SPRING", "Spring"]  # most frequent first, then by code point
    assert dict(inputs.word_counts(lines))["spring"] == 4
    exact_counts = dict(inputs.word_counts(lines, fold_case=False))
    assert (exact_counts["spring"], exact_counts["Spring"], exact_counts["SPRING"]) == (2, 1, 1)
    assert "the" in dict(inputs.word_counts(lines)) and "The" not in dict(inputs.word_counts(lines))
    assert inputs.suggest_word(lines, fold_case=False) == "spring"
    infl = inputs.find_occurrences(inputs.parse_input("Springs and springs").lines, "spring", True, fold_case=False)
    assert [o.token for o in infl] == ["springs"]


def test_layer0_type_neighbours_one_row_per_spelling_without_the_query():
    lines = [inputs.Line("a bank b", None, ("a", "bank", "b")), inputs.Line("bank c", None, ("bank", "c"))]
    # layer 0 is equal for equal spellings; "a" is closest to "bank", then "c", then "b"
    vec = {"a": [1.0, 0.1], "bank": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 0.5]}
    acts = [np.array([[vec[t] for t in line.tokens]] * 3, dtype=np.float32) for line in lines]
    table = activations.TokenTable(lines, acts)
    found = neighbours.layer0_type_neighbours(table, None, row=1, k=5)
    assert [w for w, _ in found] == ["a", "c", "b"]
    assert found[0][1] == pytest.approx(1.0 / np.sqrt(1.01))


def test_uploaded_text_is_cut_to_what_is_used():
    text = "\n".join(f"sentence {i} " + "x" * (2000 if i == 3 else 5) for i in range(5000))
    box, note = inputs.text_for_box(text, "big.txt")
    assert len(box.split("\n")) == inputs.MAX_LINES and len(box) <= inputs.MAX_TEXT_CHARS
    assert note == "From big.txt: only the first 500 of its 5,000 lines were read."  # the cut: parse_input's note
    assert (
        inputs.parse_input(box, str.split).lines
        == inputs.parse_input(text, str.split).lines[:3]
        + inputs.parse_input(box, str.split).lines[3:4]
        + inputs.parse_input(text, str.split).lines[4:500]
    )


@pytest.mark.parametrize("text", ["", "\n\n", " \t\n\u200b\n"])
def test_an_empty_upload_is_refused_rather_than_clearing_the_box(text):
    with pytest.raises(ValueError, match=r"^empty\.txt holds no text .*your sentences are unchanged$"):
        inputs.text_for_box(text, "empty.txt")


def test_an_uploaded_long_line_is_reported_cut_once():
    text = "[river] the bank " + "w " * 1500 + "\nshort bank line"
    box, note = inputs.text_for_box(text, "long.txt")
    shown = [n for n in [note, *inputs.parse_input(box, str.split).notes] if n]  # what the page shows after an upload
    assert shown == ["1 line longer than 1,000 characters was cut.", "1 sentence longer than 100 tokens was cut."]
    assert (
        sum(("characters was cut" in n or "characters were cut" in n) or "first 1,044 characters" in n for n in shown)
        == 1
    )
    # a cut parse_input cannot see (invisible characters took the room) is the upload note's, again once
    hidden = "a " + "\u200b" * 600 + "y" * 900
    box, note = inputs.text_for_box(hidden, "z.txt")
    assert note == "From z.txt: 1 line was cut to its first 1,044 characters."
    assert not any("characters w" in n and "cut" in n for n in inputs.parse_input(box, str.split).notes)


def test_control_and_zero_width_characters_do_not_make_sentences_or_tokens():
    parsed = inputs.parse_input(
        "[river] We sat on the ba\u200bnk\x0cof the river.\u2028Then\u200b we left.\n"
        "\ufeff[money] The bank\x85raised rates.",
        str.split,
    )
    assert [ln.label for ln in parsed.lines] == ["river", "money"]
    assert parsed.lines[0].tokens == ("We", "sat", "on", "the", "bank", "of", "the", "river.", "Then", "we", "left.")
    assert parsed.lines[1].tokens == ("The", "bank", "raised", "rates.")


def test_exact_case_occurrences_still_follow_the_one_rule():
    # elmo_core.data.wordforms decides which tokens are the word (whole tokens, a possessive ending off,
    # inflections); without case folding they must also have the typed capitals (wordforms.same_case)
    lines = inputs.parse_input("The Bank was shut .\nThe bank 's door .\nRiver-Bank and Banks .").lines
    lines = list(lines) + [inputs.Line("Bank\u2019s vault", None, ("Bank\u2019s", "vault"))]  # a token that kept it
    assert [o.token for o in inputs.find_occurrences(lines, "Bank", fold_case=False)] == ["Bank", "Bank\u2019s"]
    assert [o.token for o in inputs.find_occurrences(lines, "Bank", True, fold_case=False)] == [
        "Bank",
        "Banks",
        "Bank\u2019s",
    ]
    assert [o.token for o in inputs.find_occurrences(lines, "bank", True)] == ["Bank", "bank", "Banks", "Bank\u2019s"]


def test_the_token_budget_counts_both_copies_of_the_table():
    assert inputs.tokens_in_budget(96 * 2**20, 3, 256) == 96 * 2**20 // (3 * 256 * 4 * 2) == 16384
    assert inputs.tokens_in_budget(10, 3, 256) == 0
