"""elmo_core.probes.mix_classifier: the scalar mix trained jointly with a linear classifier."""

from __future__ import annotations

import numpy as np

from elmo_core.probes import mix_classifier


def test_mix_classifier_learns_the_informative_layer():
    rng = np.random.default_rng(0)
    n, d = 600, 8
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 3, d)).astype(np.float32)
    x[:, 1, 0] += 3 * (2 * y - 1)  # only layer 1 carries the label
    model = mix_classifier.train_mix_classifier(x, y, 2, epochs=15, lr=2e-2)
    s = model.mix.s.detach().numpy()
    assert abs(s.sum() - 1) < 1e-6 and s.argmax() == 1
    summary = mix_classifier.mix_summary(model)
    assert np.allclose(summary["s"], s, atol=1e-6) and len(summary["w"]) == 3
    assert summary["gamma"] == float(model.mix.gamma.detach())


def test_layer_scale_is_the_mean_vector_length_per_layer():
    x = np.zeros((2, 3, 2), dtype=np.float32)
    x[:, 0] = [3.0, 4.0]  # length 5
    x[0, 2] = [0.0, 2.0]  # lengths 2 and 0
    assert mix_classifier.layer_scale(x) == [5.0, 0.0, 1.0]
