"""Reading one value of a link's query parameters (a number, a choice, a flag), checked, with a note when it is off."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def quote(value: object, limit: int = 40) -> str:
    """``value`` quoted for a note (it is user text: the note is escaped before it is shown), cut at ``limit``."""
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def as_float(raw: str) -> float | None:
    """``float(raw)``, or None when it is no number."""
    try:
        return float(raw)
    except ValueError:
        return None


class LinkValues:
    """The values of a link's query parameters ``params`` (str -> str), each read checked: a value out of range is
    clamped, one that makes no sense gives the default; each such value adds a note in plain text to ``notes``."""

    def __init__(self, params: Mapping[str, str], notes: list[str]):
        self.params = params
        self.notes = notes

    def number(
        self,
        name: str,
        default: float,
        lo: float,
        hi: float,
        what: str,
        integer: bool = False,
        reset: bool = False,
        zero: str = "",
    ) -> float:
        """The link's value of ``name`` within [lo, hi]: clamped into it, or with ``reset`` the default (for an
        index, where the nearest end of the range is no better a guess than the first). ``zero`` says what 0
        means where it is a setting of its own (the clusters' "by silhouette")."""
        raw = self.params.get(name)
        if raw is None:
            return default

        def shown(v: float) -> str:
            if zero and v == 0:
                return f"0 ({zero})"
            return f"{int(v):,}" if integer else f"{v:g}"

        label = what if what.endswith("#") else what + " "
        said = None  # how the note names the value: as Python prints it, or as the link wrote it
        try:
            value = int(raw) if integer else float(raw)
        except ValueError:
            written = as_float(raw) if integer else None
            if written is not None and math.isfinite(written):
                if not written.is_integer():
                    self.notes.append(
                        f"The link's {label}{quote(raw[:40])} is not a whole number; using {shown(default)}."
                    )
                    return default
                value, said = int(written), quote(raw[:40])  # "1e3" or "4.0": a whole number written as a float
            else:
                digits = raw.strip().lstrip("+-")
                too_long = digits.isdigit() and len(digits) > 15  # Python refuses int() of over 4,300 digits
                self.notes.append(
                    f"The link's {label}{quote(raw[:40] + ('...' if len(raw) > 40 else ''))} is "
                    f"{'too large' if too_long else 'not a number'}; using {shown(default)}."
                )
                return default
        if not math.isfinite(value):
            spelled = raw.strip().lstrip("+-").lower() in ("inf", "infinity", "nan")
            self.notes.append(
                f"The link's {label}{quote(raw[:40])} is "
                f"{'not a finite number' if spelled else 'too large'}; using {shown(default)}."
            )
            return default
        if not lo <= value <= hi:
            kept = default if reset else min(max(value, lo), hi)
            if said is None and shown(value) in (shown(lo), shown(hi)):  # 3.0000001 would print as 3: quote it
                said = quote(raw[:40])
            self.notes.append(
                f"The link's {label}{said or shown(value)} is outside {shown(lo)} to {shown(hi)}; using {shown(kept)}."
            )
            return kept
        return value

    def choice(self, name: str, default: str, allowed: Sequence[str], what: str) -> str:
        """The link's value of ``name`` when it is one of ``allowed``; else the default, with a note."""
        raw = self.params.get(name)
        if raw is None or raw == default:
            return default
        if raw in allowed:
            return raw
        self.notes.append(
            f"The link asks for an unknown {what} {quote(raw)}; the known ones are "
            f"{', '.join(allowed)}. Using {default}."
        )
        return default

    def flag(self, name: str, default: bool, on: str = "1", off: str = "0") -> bool:
        """The link's ``name`` as a bool, written ``on`` or ``off``; anything else gives the default, with a note."""
        raw = self.params.get(name)
        if raw is None:
            return default
        if raw in (on, off):
            return raw == on
        self.notes.append(f"The link's {name}={quote(raw)} is neither {on} nor {off}; ignored.")
        return default
