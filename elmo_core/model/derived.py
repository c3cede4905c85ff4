"""Values derived from a module's parameters (oneDNN-packed weights, the character CNN's stacked kernel), cached
on the module for inference and rebuilt when a parameter they come from changes.

The cache lives in the module's ``__dict__`` under a slot name, not as a buffer: it is never saved in a state
dict or checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import torch
from torch import nn

T = TypeVar("T")


class Cache(dict):
    """One module's cached values (name -> (key, value)). A copied or pickled module starts with an empty cache and
    rebuilds on use: oneDNN tensors have no storage that ``copy.deepcopy`` or pickling could copy, and a copy's
    parameters are new tensors anyway."""

    def __deepcopy__(self, memo):
        return Cache()

    def __reduce__(self):
        return (Cache, ())


def cached(owner: nn.Module, slot: str, name: str, sources: Sequence[torch.Tensor], build: Callable[[], T]) -> T:
    """``build()``, cached in ``owner.__dict__[slot][name]`` until one of ``sources`` changes.

    Args:
        owner: the module that holds the source parameters.
        slot: the ``__dict__`` entry that holds this kind of cache (e.g. ``"_onednn"``).
        name: a key unique within the slot.
        sources: the tensors the value is computed from.
        build: computes the value (called without arguments).

    Returns:
        The cached value, or a new one when a source was replaced (its ``data_ptr``), changed in place (its
        ``_version``: ``load_state_dict``, an optimiser step) or changed shape, dtype or device.
    """
    cache = owner.__dict__.setdefault(slot, Cache())
    key = tuple((t.data_ptr(), t._version, tuple(t.shape), t.dtype, t.device) for t in sources)
    hit = cache.get(name)
    if hit is not None and hit[0] == key:
        return hit[1]
    value = build()
    cache[name] = (key, value)
    return value
