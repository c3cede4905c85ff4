"""elmo_core's public API (``elmo_core.__all__``): every name is there, and ``import elmo_core`` leaves the tokenizer
(sacremoses), the probes and the evaluation helpers for their first use."""

from __future__ import annotations

import subprocess
import sys


def test_every_public_name_resolves_and_the_heavy_groups_load_on_first_use():
    code = (
        "import sys, elmo_core\n"
        "heavy = ('sacremoses', 'elmo_core.probes', 'elmo_core.data.tokenize', 'elmo_core.training.evaluate')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "missing = [n for n in elmo_core.__all__ if getattr(elmo_core, n, None) is None]\n"
        "print(missing)\n"
        "from elmo_core import tokenize, probes, ProbeReport\n"
        "print(tokenize('A bank.'), probes.__name__, ProbeReport.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "[]" and out[1] == "[]", out
    assert out[2] == "['A', 'bank', '.'] elmo_core.probes elmo_core.probes.results"


def test_an_unknown_name_is_an_attribute_error():
    import elmo_core

    try:
        elmo_core.no_such_name  # noqa: B018
    except AttributeError as err:
        assert "no_such_name" in str(err)
    else:
        raise AssertionError("an unknown name must raise AttributeError")
