"""Which tokens count as a given word: the one rule the sense probes and the explorer share.

The rule:

* Tokens are compared case-folded, after a possessive ending is taken off: "Bank", "BANK" and "bank's"
  all count as "bank" (the tokenizer already splits "bank's" into "bank" + "'s"; the ending is also taken
  off a token that kept it, as with a curly apostrophe, and off the word itself, so a search for "bank's"
  finds "bank").
* A token counts only as a whole: a hyphenated compound is another word ("river-bank" is not "bank"; a
  search for "river-bank" finds it).
* Without inflections the word matches only itself. With them, its regular English inflections for the
  part of speech (``pos``) are added, the word taken as the dictionary form:
  nouns -s, -es (after s, x, z, ch, sh, o), consonant + y -> -ies; verbs those and -ed (-d after e,
  consonant + y -> -ied), -ing (e dropped, ie -> -ying), a doubled final consonant after a single short
  vowel (stop -> stopped, stopping); adjectives and adverbs -er, -est (e dropped, y -> -ier, -iest).
  ``pos=""`` (unknown, as in the explorer and our own sentence sets) means nouns and verbs, not -er/-est,
  which would make "player" the word "play" and "banker" the word "bank". So "bank" finds "banks",
  "banked" and "banking" (banking on someone is the verb), but with ``pos="n"`` only "banks".
* With ``pos=""`` a word that looks like an -s form is also taken as that form of its base, so a search
  for "plays" finds "play", "played", "playing" ("studies" -> "study", "watches" -> "watch"). Words ending
  in -ss, -us, -is (glass, bus, this) are left alone. A known false friend: "news" also finds "new".
* Capitals are ignored by default. A caller that groups by spelling (the explorer's "treat case as the same
  word" switched off) adds ``same_case``: then a form counts only when the part it shares with the word as
  typed has the same capitals ("Spring" finds "Spring" and "Springs", not "spring" or "SPRING").
* Irregular forms are not guessed: "sprung" counts as "spring" only when the caller passes it in
  ``irregular`` (the sense probes pass WordNet's exception lists; the explorer has no lexicon, so it finds
  "spring" and "springs" but not "sprang" or "sprung").

The rule over-generates a little (e.g. "visitted"); that is harmless, since only forms that occur in a
sentence ever match. It is not a lemmatizer: "banking" the industry and "banking" the verb look the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

POS = ("n", "v", "a", "r", "")
_VOWELS = frozenset("aeiou")
_POSSESSIVE = ("'s", "\u2019s", "'", "\u2019")


def normalise(token: str) -> str:
    """The form of ``token`` that the rule compares: case-folded, a possessive ending taken off ("Bank's"
    -> "bank", "banks'" -> "banks"); a token that is only the ending ("'s", "'") stays as it is."""
    t = token.strip().casefold()
    for end in _POSSESSIVE:
        if t.endswith(end) and len(t) > len(end):
            return t[: -len(end)]
    return t


def _noun_forms(w: str) -> set[str]:
    forms = {w + "s"}
    if w.endswith(("s", "x", "z", "ch", "sh", "o")):
        forms.add(w + "es")
    if len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS:
        forms.add(w[:-1] + "ies")
    return forms


def _verb_forms(w: str) -> set[str]:
    forms = _noun_forms(w)  # the third person singular is spelled like the plural
    if w.endswith("e"):
        forms |= {w + "d", w[:-1] + "ing"}
    else:
        forms |= {w + "ed", w + "ing"}
    if len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS:
        forms.add(w[:-1] + "ied")
    if w.endswith("ie"):
        forms.add(w[:-2] + "ying")
    if len(w) >= 3 and w[-1] not in _VOWELS | {"w", "x", "y"} and w[-2] in _VOWELS and w[-3] not in _VOWELS:
        forms |= {w + w[-1] + "ed", w + w[-1] + "ing"}
    return forms


def _graded_forms(w: str) -> set[str]:
    stem = w[:-1] if w.endswith("e") else w
    forms = {stem + "er", stem + "est"}
    if len(w) > 1 and w.endswith("y"):
        forms |= {w[:-1] + "ier", w[:-1] + "iest"}
    return forms


def _s_bases(w: str) -> set[str]:
    """The bases ``w`` could be the -s form of (empty when it does not look like one)."""
    if len(w) <= 3 or not w.endswith("s") or w.endswith(("ss", "us", "is")):
        return set()
    bases = {w[:-1]}
    if w.endswith("ies"):
        bases.add(w[:-3] + "y")
    if w.endswith(("ses", "xes", "zes", "ches", "shes", "oes")):
        bases.add(w[:-2])
    return bases


def form_groups(tokens: Sequence[str]) -> list[int]:
    """For each token of a list (a vocabulary, most frequent first), the index of its group's first token:
    tokens that are the same word by this module's rule share it ("Trunks", "trunks" and "trunk" point to
    whichever of them comes first). Same word: the same ``normalise`` form, or an -s form and its base when
    that base is in the list too; -ed and -ing forms stay apart (they are often another sense or part of
    speech). Used by training to group a word's occurrences across capitals and plural.

    Returns: a list of ints, one per token, each <= its own index.
    """
    return _joined(*_first_of_forms(tokens))


def _first_of_forms(tokens: Sequence[str]) -> tuple[list[str], dict[str, int]]:
    """Each token's ``normalise`` form, and the index of the first token with each form."""
    forms = [normalise(token) for token in tokens]
    first: dict[str, int] = {}
    for i, form in enumerate(forms):
        first.setdefault(form, i)
    return forms, first


def _joined(forms: list[str], first: dict[str, int]) -> list[int]:
    """Union-find over the tokens: the same form, or an -s form and its base; each group keeps its first index."""
    root = list(range(len(forms)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    def join(a: int, b: int) -> None:
        a, b = find(a), find(b)
        root[max(a, b)] = min(a, b)

    for i, form in enumerate(forms):
        join(i, first[form])
        for base in _s_bases(form):
            if base in first:
                join(i, first[base])
    return [find(i) for i in range(len(forms))]


def form_grouper(tokens: Sequence[str], unknown: int) -> Callable[[str], int]:
    """A function from any token to the ``form_groups`` group of ``tokens`` it belongs to: by its ``normalise``
    form, else by the base of its -s form; ``unknown`` when neither is in ``tokens``. So a token outside the
    list ("Trunks" where only "trunks" and "trunk" are in a vocabulary) still finds its word."""
    forms, first = _first_of_forms(tokens)
    groups = _joined(forms, first)
    cache: dict[str, int] = {}

    def group_of(token: str) -> int:
        if token not in cache:
            form = normalise(token)
            i = first.get(form)
            if i is None:
                i = min((first[b] for b in _s_bases(form) if b in first), default=None)
            cache[token] = unknown if i is None else groups[i]
        return cache[token]

    return group_of


def word_forms(word: str, pos: str = "", inflections: bool = True, irregular: Iterable[str] = ()) -> frozenset[str]:
    """The normalised token forms that count as ``word`` (see the module docstring for the rule).

    Args:
        word: the word as typed or as a dictionary form; normalised like a token (``normalise``).
        pos: "n", "v", "a", "r", or "" (unknown: noun and verb inflections, and the base of an -s form).
        inflections: False gives only the word itself.
        irregular: extra forms that count (e.g. WordNet's exception list for the lemma), normalised too.
    Returns: a frozenset of case-folded strings; empty when ``word`` is blank.
    Raises: ValueError for another ``pos``.
    """
    if pos not in POS:
        raise ValueError(f"pos must be one of {POS}, got {pos!r}")
    w = normalise(word)
    if not w:
        return frozenset()
    forms = {w}
    if not inflections:
        return frozenset(forms)
    bases = {w} | (_s_bases(w) if pos == "" else set())
    for base in bases:
        forms.add(base)
        if pos in ("n", ""):
            forms |= _noun_forms(base)
        if pos in ("v", ""):
            forms |= _verb_forms(base)
        if pos in ("a", "r"):
            forms |= _graded_forms(base)
    forms |= {normalise(f) for f in irregular}
    return frozenset(forms)


def is_form(token: str, forms: frozenset[str] | set[str]) -> bool:
    """Whether ``token`` (as written) counts as the word whose ``word_forms`` are ``forms``."""
    return normalise(token) in forms


def _without_possessive(token: str) -> str:
    t = token.strip()
    for end in _POSSESSIVE:
        if t.casefold().endswith(end) and len(t) > len(end):
            return t[: -len(end)]
    return t


def same_case(token: str, word: str) -> bool:
    """Whether ``token`` has ``word``'s capitals where they share their spelling: the two (possessive ending
    off) agree letter for letter, case included, over their longest case-insensitively common beginning.
    Used with ``is_form`` when case must not be folded; "Banks" has "Bank"'s capitals, "banks" and "BANKS" do not."""
    t, w = _without_possessive(token), _without_possessive(word)
    p = 0
    for a, b in zip(t, w):
        if a.casefold() != b.casefold():
            break
        p += 1
    return t[:p] == w[:p]


def find_form(tokens: Sequence[str], forms: frozenset[str] | set[str]) -> int | None:
    """Index of the first token that counts as the word (``is_form``), or None."""
    for i, token in enumerate(tokens):
        if is_form(token, forms):
            return i
    return None


def token_pattern(forms: frozenset[str] | set[str]) -> re.Pattern[str]:
    """A regex that finds, in space-separated tokenized text, the tokens that count as the word (a fast
    pre-filter for a large corpus; case-insensitive, a possessive ending allowed, whole tokens only).
    Raises: ValueError when ``forms`` is empty."""
    if not forms:
        raise ValueError("no word forms to search for")
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    ends = "|".join(re.escape(e) for e in _POSSESSIVE)
    return re.compile(rf"(?<!\S)(?:{alternatives})(?:{ends})?(?!\S)", re.IGNORECASE)
