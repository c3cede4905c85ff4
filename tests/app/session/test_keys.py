"""app/session/keys.py: every control's widget key is named after its field of Controls."""

from __future__ import annotations

import dataclasses

from app.explore.controls import Controls
from app.session import keys, widgets


def test_every_widget_key_is_named_after_its_field():
    for name in widgets.PLAIN:
        assert keys.key(name) == keys.PREFIX + name
    assert {keys.SENTENCES, keys.WORD, keys.GAMMA, keys.N_CLUSTERS, keys.SAME_WORD} <= {
        keys.key(n) for n in widgets.PLAIN
    }
    # the rest hold another form than the field (one slider per weight, labels, two boxes) or are no widget here
    assert set(f.name for f in dataclasses.fields(Controls)) - set(widgets.PLAIN) == {
        "weights",
        "tab",
        "map_view",
        "compare",
        "model",
        "present",
        "example",
    }
    assert keys.weight_key(2) == "explorer_w_2" and keys.private("x") == "_explorer_x"
