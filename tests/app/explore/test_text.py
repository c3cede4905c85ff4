"""app.explore.text: plurals, concordance (keyword-in-context) lines, and invisible characters and server paths in
plain text."""

from __future__ import annotations

import pytest

from app.explore.text import ELLIPSIS, Kwic, hide_paths, kwic, plural, visible
from app.render.safe import md, shown

TOKENS = "On a warm afternoon we sat on the grassy bank of the slow river and watched the boats go by .".split()


def test_plural():
    assert [plural(1, "occurrence"), plural(2, "occurrence"), plural(0, "sentence")] == [
        "1 occurrence",
        "2 occurrences",
        "0 sentences",
    ]
    assert (
        plural(1200, "reference sentence") == "1,200 reference sentences"
        and plural(2, "child", "children") == "2 children"
    )


@pytest.mark.parametrize("position", range(len(TOKENS)))
def test_the_target_is_always_whole_and_the_contexts_fit(position):
    k = kwic(TOKENS, position, left_chars=20, right_chars=15)
    assert k.target == TOKENS[position]
    assert len(k.left) <= 20 + 1 and len(k.right) <= 15 + 1  # the budget, plus the "…" mark
    left_words = [w for w in k.left.split() if w != ELLIPSIS]
    right_words = [w for w in k.right.split() if w != ELLIPSIS]
    # whole tokens, the ones next to the target: the left context ends right before it, the right starts after it
    assert left_words == TOKENS[position - len(left_words) : position]
    assert right_words == TOKENS[position + 1 : position + 1 + len(right_words)]
    assert k.left.startswith(ELLIPSIS) == (len(left_words) < position)
    assert k.right.endswith(ELLIPSIS) == (position + 1 + len(right_words) < len(TOKENS))


def test_long_tokens_and_edges():
    k = kwic(["x" * 80, "bank", "y" * 80], 1, 20, 20)
    assert k == Kwic(ELLIPSIS + "x" * 19, "bank", "y" * 19 + ELLIPSIS)
    assert kwic(["bank"], 0) == Kwic("", "bank", "")
    assert kwic(TOKENS, 9).plain().count("«bank»") == 1
    with pytest.raises(IndexError):
        kwic(TOKENS, len(TOKENS))


def test_visible_writes_invisible_characters_as_escapes():
    assert visible("bank") == "bank" and visible("naïve café") == "naïve café"
    assert visible("ba\u200bnk") == "ba\\u200bnk" and visible("\ufeffa\u200db") == "\\ufeffa\\u200db"
    assert visible("a\tb\x85c\u2028d\xa0e") == "a\\tb\\x85c\\u2028d\\xa0e"  # as repr writes them
    assert shown(md(visible("ba\u200bnk"))) == "ba\\u200bnk"  # and md keeps the escape on the page


def test_hide_paths_keeps_what_is_missing_and_how_to_fix_it_but_not_where_the_server_looked():
    message = (
        "WordNet not found (looked in /usr/share/wordnet, /srv/app/data/probes/wordnet): install it with "
        "`apt-get install -y wordnet-base`, or run `python -m elmo_core probe --prepare` (into data/probes/)"
    )
    assert hide_paths(message) == (
        "WordNet not found on this server: install it with `apt-get install -y "
        "wordnet-base`, or run `python -m elmo_core probe --prepare` (into data/probes/)"
    )
    assert hide_paths("no reference corpus at /home/teacher/ref") == "no reference corpus at …"
    assert hide_paths("the sense probe '/opt/x/probe.tsv' is missing; see C:\\data\\x, ~/y or https://e.org/a") == (
        "the sense probe '…' is missing; see …, … or https://e.org/a"
    )  # a URL and and/or are no paths
    assert hide_paths("read/write and/or") == "read/write and/or"
