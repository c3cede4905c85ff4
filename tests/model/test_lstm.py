"""elmo_core.model.lstm: the projected biLSTM's inference loop against its differentiable step."""

import torch

from elmo_core.model.lstm import BiLSTM


def test_lstm_inplace_loop_is_bitwise_the_functional_step(fixture_bilm):
    """The allocation-free inference loop and the differentiable step are the same arithmetic."""
    lstm: BiLSTM = fixture_bilm.lstm
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 9, lstm.config.projection_dim, generator=g)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 5:] = False
    with torch.inference_mode():
        fast, fast_state = lstm(x, mask, return_state=True)
    for p in lstm.parameters():
        p.requires_grad_(True)
    try:
        slow, slow_state = lstm(x, mask, return_state=True)
    finally:
        for p in lstm.parameters():
            p.requires_grad_(False)
    for a, b in zip(fast + fast_state.h + fast_state.c, slow + slow_state.h + slow_state.c):
        assert torch.equal(a, b.detach())
