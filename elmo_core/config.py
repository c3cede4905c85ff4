"""biLM hyperparameters, read from and written to the ELMo ``options.json`` schema.

Field names follow ``options.json`` exactly (``projection_dim``, ``cell_clip``, ``proj_clip``,
``n_highway``, ``use_skip_connections``) so that a published options file maps one-to-one.
Source: ELMO_SPEC.md section 1.1 (bilm-tf / AllenNLP options schema).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CharCNNConfig:
    """Character CNN + highway + projection (layer 0).

    filters: ((width, count), ...) convolution filters; their counts sum to NF.
    n_highway: number of highway layers of size NF.
    embedding_dim: E, size of a character embedding.
    n_characters: 262 at inference (261 stored rows + the zero row for padded tokens).
    max_characters_per_token: W = 50 character slots per token.
    activation: "relu" or "tanh", applied after the max-pool of each filter.
    """

    filters: tuple[tuple[int, int], ...]
    n_highway: int
    embedding_dim: int
    n_characters: int = 262
    max_characters_per_token: int = 50
    activation: str = "relu"

    @property
    def n_filters(self) -> int:
        """NF, the total number of filters (the char-CNN output size)."""
        return sum(count for _, count in self.filters)


@dataclass(frozen=True)
class LSTMConfig:
    """One direction's stack of LSTM cells with projection.

    dim: C, LSTM cell size. projection_dim: P, output (and input) size of every layer.
    n_layers: L. cell_clip / proj_clip: clip values for c and the projected h (0 = no clipping).
    use_skip_connections: residual connection on layers >= 1 (output only, not the recurrent state).
    """

    dim: int
    projection_dim: int
    n_layers: int
    cell_clip: float = 3.0
    proj_clip: float = 3.0
    use_skip_connections: bool = True


@dataclass(frozen=True)
class BiLMConfig:
    """Full biLM configuration. ``extra`` keeps training-only keys of options.json untouched."""

    char_cnn: CharCNNConfig
    lstm: LSTMConfig
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def projection_dim(self) -> int:
        return self.lstm.projection_dim

    @property
    def output_dim(self) -> int:
        """2P, the size of every ELMo layer (forward and backward concatenated)."""
        return 2 * self.lstm.projection_dim

    @property
    def num_layers(self) -> int:
        """L + 1: layer 0 (token representation) plus the L biLSTM layers."""
        return self.lstm.n_layers + 1

    @classmethod
    def from_dict(cls, options: dict[str, Any]) -> "BiLMConfig":
        """Build from a parsed options.json.

        Raises:
            ValueError: a required key is missing or has the wrong type; the message names the key.
        """
        if not isinstance(options, dict):
            raise ValueError("options.json must hold a JSON object with 'lstm' and 'char_cnn' blocks")

        def need(block: dict, key: str, where: str) -> Any:
            if not isinstance(block, dict) or key not in block:
                raise ValueError(f"options.json: missing key '{where}.{key}'")
            return block[key]

        cnn = need(options, "char_cnn", "")
        lstm = need(options, "lstm", "")
        try:
            filters = tuple((int(w), int(n)) for w, n in need(cnn, "filters", "char_cnn"))
            emb = need(cnn, "embedding", "char_cnn")
            char_cnn = CharCNNConfig(
                filters=filters,
                n_highway=int(need(cnn, "n_highway", "char_cnn")),
                embedding_dim=int(need(emb, "dim", "char_cnn.embedding")),
                n_characters=int(cnn.get("n_characters", 262)),
                max_characters_per_token=int(cnn.get("max_characters_per_token", 50)),
                activation=str(cnn.get("activation", "relu")),
            )
            lstm_cfg = LSTMConfig(
                dim=int(need(lstm, "dim", "lstm")),
                projection_dim=int(need(lstm, "projection_dim", "lstm")),
                n_layers=int(need(lstm, "n_layers", "lstm")),
                cell_clip=float(lstm.get("cell_clip") or 0.0),
                proj_clip=float(lstm.get("proj_clip") or 0.0),
                use_skip_connections=bool(lstm.get("use_skip_connections", False)),
            )
        except (TypeError, ValueError) as exc:
            if str(exc).startswith("options.json"):
                raise
            raise ValueError(f"options.json: a value has the wrong type ({exc})") from exc
        if char_cnn.activation not in ("relu", "tanh"):
            raise ValueError(f"options.json: char_cnn.activation must be 'relu' or 'tanh', got {char_cnn.activation!r}")
        if char_cnn.max_characters_per_token != 50:
            raise ValueError("options.json: max_characters_per_token must be 50 (the ELMo character encoding)")
        if min(char_cnn.embedding_dim, lstm_cfg.dim, lstm_cfg.projection_dim, lstm_cfg.n_layers) < 1:
            raise ValueError("options.json: sizes must be positive integers")
        extra = {k: v for k, v in options.items() if k not in ("char_cnn", "lstm")}
        return cls(char_cnn=char_cnn, lstm=lstm_cfg, extra=extra)

    @classmethod
    def from_options_json(cls, path: str | Path) -> "BiLMConfig":
        """Read an ELMo options.json.

        Raises:
            FileNotFoundError: no such file.
            ValueError: not valid JSON, or a required key is missing (named in the message).
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path.name}: not a UTF-8 JSON options file") from exc
        try:
            options = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
        return cls.from_dict(options)

    def to_dict(self) -> dict[str, Any]:
        """The options.json object (inference keys plus any preserved training keys)."""
        c, l = self.char_cnn, self.lstm
        return {
            **self.extra,
            "lstm": {
                "use_skip_connections": l.use_skip_connections,
                "projection_dim": l.projection_dim,
                "cell_clip": l.cell_clip,
                "proj_clip": l.proj_clip,
                "dim": l.dim,
                "n_layers": l.n_layers,
            },
            "char_cnn": {
                "activation": c.activation,
                "filters": [list(f) for f in c.filters],
                "n_highway": c.n_highway,
                "embedding": {"dim": c.embedding_dim},
                "n_characters": 262,
                "max_characters_per_token": c.max_characters_per_token,
            },
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
