"""elmo_core.data.text: the line and token rules shared by the CLI and the app (docs/INPUT_RULES.md)."""
from __future__ import annotations

from elmo_core.data.text import clean_line, line_tokens, split_lines


def test_text_rules():
    assert split_lines("\ufeffa b\r\nc\x0cd\x85e\u2028f\n\ng\n") == ["a b", "c\x0cd\x85e\u2028f", "", "g"]
    assert split_lines("") == [] and split_lines("\n") == [""] and split_lines("a") == ["a"]
    assert clean_line("c\x0cd\x85e\u2028f\x1bg") == "c d e f g"
    assert line_tokens("ba\u200bnk \u200b \u2060 the\u00a0river \u202eevil\ufeff") == ["bank", "the", "river", "evil"]
    assert line_tokens("naïve 😀") == ["naïve", "😀"]  # no normalisation of ordinary text


def test_cr_crlf_and_lf_are_each_one_line_break():
    assert split_lines("a\rb\r\nc\nd\r") == ["a", "b", "c", "d"]
    assert split_lines("a\r\rb") == ["a", "", "b"]  # two CRs: an empty line between, as two LFs
    assert split_lines("\n".join(f"line {i}" for i in range(300)).replace("\n", "\r")) == [
        f"line {i}" for i in range(300)]
