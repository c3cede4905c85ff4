"""The oneDNN products: the same results as the plain ones, used only where they apply, never stale."""

import copy
import io

import pytest
import torch
from torch import nn

from elmo_core import batch_to_ids
from elmo_core.model import onednn
from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig

pytestmark = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="no oneDNN in this torch")

OPTIONS = {
    "lstm": {
        "use_skip_connections": True,
        "projection_dim": 32,
        "cell_clip": 3,
        "proj_clip": 3,
        "dim": 64,
        "n_layers": 2,
    },
    "char_cnn": {
        "activation": "relu",
        "filters": [[1, 16], [2, 16], [3, 32]],
        "n_highway": 2,
        "embedding": {"dim": 8},
        "n_characters": 262,
        "max_characters_per_token": 50,
    },
}


def test_applies_only_to_large_float32_weights_at_inference():
    big, small = torch.zeros(2048, 1024), torch.zeros(1024, 1024)
    x = torch.zeros(3, 1024)
    assert onednn.applies(big, x)
    assert not onednn.applies(small, x)
    assert not onednn.applies(big.double(), x.double())
    assert not onednn.applies(big, x.bfloat16())
    weight = nn.Parameter(big)
    assert not onednn.applies(weight, x)  # grad enabled and the weight wants one: training
    with torch.no_grad():
        assert onednn.applies(weight, x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not onednn.applies(big, x)


def test_a_whole_model_matches_the_plain_products(monkeypatch):
    torch.manual_seed(0)
    model = BiLM(BiLMConfig.from_dict(OPTIONS)).eval()
    ids = batch_to_ids([["The", "bank", "of", "the", "river", "."], ["A", "loan", "from", "the", "bank"]])
    with torch.no_grad():
        plain = model(ids, return_state=True).activations  # the step loop (clipped) with a mask
    monkeypatch.setattr(onednn, "MIN_WEIGHT_ELEMENTS", 1)
    with torch.no_grad():
        fast = model(ids, return_state=True).activations
    assert set(model.lstm.layers[0].__dict__["_onednn"]) == {"state", "proj"}
    assert "_onednn" in model.char_cnn.highways[1].carry.__dict__
    for a, b in zip(plain, fast):
        torch.testing.assert_close(b, a, atol=1e-6, rtol=1e-5)


def test_the_packed_weights_follow_in_place_changes_and_replacement(monkeypatch):
    monkeypatch.setattr(onednn, "MIN_WEIGHT_ELEMENTS", 1)
    layer = nn.Linear(6, 4)
    x = torch.randn(5, 6)
    with torch.no_grad():
        torch.testing.assert_close(onednn.run_linear(layer, x), layer(x))
        layer.weight.mul_(2.0)  # an optimiser step or load_state_dict: in place
        torch.testing.assert_close(onednn.run_linear(layer, x), x @ layer.weight.T + layer.bias)
        layer.weight = nn.Parameter(torch.randn(4, 6))  # a replaced parameter
        torch.testing.assert_close(onednn.run_linear(layer, x), x @ layer.weight.T + layer.bias)


@pytest.mark.parametrize("min_elements", [1, 1 << 40], ids=["oneDNN", "plain"])
@pytest.mark.parametrize("activation", ["none", "sigmoid", "relu"])
def test_the_fused_activation_is_the_activation_of_the_product(monkeypatch, min_elements, activation):
    monkeypatch.setattr(onednn, "MIN_WEIGHT_ELEMENTS", min_elements)
    torch.manual_seed(0)
    layer = nn.Linear(64, 48)
    x = torch.randn(7, 64)
    expected = {"none": lambda y: y, "sigmoid": torch.sigmoid, "relu": torch.relu}[activation](
        x @ layer.weight.T + layer.bias
    )
    with torch.no_grad():
        out = onednn.run_linear(layer, x, activation)
    assert ("_onednn" in layer.__dict__) == (min_elements == 1)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)
    if activation == "relu":
        assert (out == 0).any() and (out > 0).any()  # the activation really ran: the product has both signs


def test_more_rows_than_max_rows_take_the_plain_product(monkeypatch):
    monkeypatch.setattr(onednn, "MIN_WEIGHT_ELEMENTS", 1)
    monkeypatch.setattr(onednn, "MAX_ROWS", 4)
    layer = nn.Linear(6, 4)
    with torch.no_grad():
        wide = torch.randn(5, 6)
        torch.testing.assert_close(onednn.run_linear(layer, wide, "relu"), torch.relu(layer(wide)))
        assert "_onednn" not in layer.__dict__
        onednn.run_linear(layer, wide[:4])
        assert "_onednn" in layer.__dict__


def test_switched_off_it_leaves_no_packed_copy(monkeypatch):
    monkeypatch.setattr(onednn, "MIN_WEIGHT_ELEMENTS", 1)
    monkeypatch.setattr(onednn, "ENABLED", False)
    layer = nn.Linear(6, 4)
    with torch.no_grad():
        onednn.run_linear(layer, torch.randn(2, 6))
    assert "_onednn" not in layer.__dict__


def test_a_module_that_used_it_can_still_be_copied_and_saved(monkeypatch):
    """oneDNN tensors have no storage to copy: a copy starts with an empty cache and repacks its own weights."""
    monkeypatch.setattr(onednn, "MIN_WEIGHT_ELEMENTS", 1)
    layer = nn.Linear(6, 4)
    x = torch.randn(3, 6)
    with torch.no_grad():
        onednn.run_linear(layer, x)
        twin = copy.deepcopy(layer)
        assert len(twin.__dict__["_onednn"]) == 0
        twin.weight.mul_(-1.0)
        torch.testing.assert_close(onednn.run_linear(twin, x), x @ twin.weight.T + twin.bias)
        torch.testing.assert_close(onednn.run_linear(layer, x), layer(x))  # the original keeps its own
    torch.save(layer, io.BytesIO())
