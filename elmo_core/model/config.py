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

from elmo_core.model.strict_json import JSONNestingError, loads_strict

# Sane bounds for every options.json size, checked before anything is allocated. The published models
# (ELMO_SPEC.md 1.2) sit well inside them: Original has C = 4096, P = 512, NF = 2048, 2 highway, E = 16.
BOUNDS = {
    "char_cnn.embedding.dim": (1, 1024),
    "char_cnn.n_highway": (0, 16),
    "char_cnn.filters": (1, 64),  # number of filters
    "char_cnn.filters.width": (1, 50),  # a filter cannot be wider than the 50 character slots
    "char_cnn.filters.count": (1, 16384),
    "char_cnn.n_filters": (1, 16384),  # NF, their sum
    "lstm.dim": (1, 16384),
    "lstm.projection_dim": (1, 8192),
    "lstm.n_layers": (1, 16),
}
# Every key an options.json may hold (ELMO_SPEC.md 1.1): the inference blocks, and the training keys that
# bilm-tf writes at the top level (kept as they are in ``BiLMConfig.extra``). Anything else is refused with the
# nearest known key suggested: a misspelt key silently replaced by its default (``use_skip_connection``
# without the final s turns the residual connection off) is a wrong answer nobody would see.
TOP_KEYS = ("lstm", "char_cnn")
TRAINING_KEYS = (
    "bidirectional",
    "dropout",
    "n_tokens_vocab",
    "batch_size",
    "unroll_steps",
    "n_epochs",
    "n_train_tokens",
    "all_clip_norm_val",
    "n_negative_samples_batch",
)
LSTM_KEYS = ("use_skip_connections", "projection_dim", "cell_clip", "proj_clip", "dim", "n_layers")
CHAR_CNN_KEYS = ("activation", "filters", "n_highway", "embedding", "n_characters", "max_characters_per_token")
EMBEDDING_KEYS = ("dim",)
MAX_OPTIONS_BYTES = 64 * 1024  # a published options.json is about 400 bytes; bilm-tf's training ones under 1 kB
MAX_OPTIONS_DEPTH = 4  # {"char_cnn": {"filters": [[w, c]]}} is the deepest an options file goes


def _unknown_keys(block: dict, known: tuple[str, ...], where: str, label: str) -> None:
    import difflib

    for key in block:
        if key not in known:
            near = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"; did you mean '{where}{near[0]}'?" if near else f" (known here: {', '.join(known)})"
            raise ValueError(f"{label}: unknown key '{where}{key}'{hint}")


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a parsed JSON value, stopping once past ``limit``."""
    if limit < 0 or not isinstance(value, (dict, list)):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(v, limit - 1) for v in children), default=0)


# A model over this many parameters is refused before it is built (Original: 93.6M). Override with the
# ``max_parameters`` argument or the ELMO_MAX_PARAMETERS environment variable.
DEFAULT_MAX_PARAMETERS = 200_000_000


def _integer(value: Any, where: str) -> int:
    """An options.json size: a JSON integer (or a float with an integral value, as 1e3), never a bool."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"options.json: {where} must be an integer, got {value!r}")
    if isinstance(value, float) and not (value == value and abs(value) < 2**63 and value.is_integer()):
        raise ValueError(f"options.json: {where} must be an integer, got {value!r}")
    return int(value)


def _bounded(value: Any, where: str) -> int:
    number = _integer(value, where)
    lo, hi = BOUNDS[where]
    if not lo <= number <= hi:
        raise ValueError(f"options.json: {where} = {number} is outside the supported range {lo}..{hi}")
    return number


def _clip_value(value: Any, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= float(value) < float("inf")):
        raise ValueError(f"options.json: {where} must be a finite number >= 0 (0 or null: no clipping), got {value!r}")
    return float(value)


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
    def from_dict(cls, options: dict[str, Any], label: str = "options.json") -> BiLMConfig:
        """Build from a parsed options.json.

        Every key must be known (``TOP_KEYS``, ``TRAINING_KEYS``, ``LSTM_KEYS``, ``CHAR_CNN_KEYS``) and every
        size is checked against ``BOUNDS`` here, before any tensor exists.

        Args: label: the file's name, which starts every message.
        Raises:
            ValueError: an unknown key (the nearest known one suggested), a required key missing, a value
                of the wrong type or outside ``BOUNDS``, or nesting deeper than an options file has; the
                message names the key and the value.
        """
        if not isinstance(options, dict):
            raise ValueError(f"{label} must hold a JSON object with 'lstm' and 'char_cnn' blocks")
        if _depth(options, MAX_OPTIONS_DEPTH) > MAX_OPTIONS_DEPTH:
            raise ValueError(f"{label}: nested deeper than an options file ({MAX_OPTIONS_DEPTH} levels)")
        _unknown_keys(options, TOP_KEYS + TRAINING_KEYS, "", label)
        for key in TRAINING_KEYS:
            value = options.get(key)
            if value is not None and not isinstance(value, (bool, int, float)):
                raise ValueError(
                    f"{label}: training key '{key}' must be a number or true/false, got {type(value).__name__}"
                )
        for block, known, where in (
            (options.get("lstm"), LSTM_KEYS, "lstm."),
            (options.get("char_cnn"), CHAR_CNN_KEYS, "char_cnn."),
            (
                (options.get("char_cnn") or {}).get("embedding") if isinstance(options.get("char_cnn"), dict) else None,
                EMBEDDING_KEYS,
                "char_cnn.embedding.",
            ),
        ):
            if block is not None and not isinstance(block, dict):
                raise ValueError(f"{label}: '{where[:-1]}' must be a JSON object, got {type(block).__name__}")
            if block:
                _unknown_keys(block, known, where, label)
        try:
            return cls._from_checked_dict(options)
        except ValueError as exc:
            text = str(exc)
            raise ValueError(label + text[len("options.json") :] if text.startswith("options.json") else text) from None

    @classmethod
    def _from_checked_dict(cls, options: dict[str, Any]) -> BiLMConfig:

        def need(block: dict, key: str, where: str) -> Any:
            if not isinstance(block, dict) or key not in block:
                raise ValueError(f"options.json: missing key '{where + '.' if where else ''}{key}'")
            return block[key]

        cnn = need(options, "char_cnn", "")
        lstm = need(options, "lstm", "")
        raw_filters = need(cnn, "filters", "char_cnn")
        if not isinstance(raw_filters, (list, tuple)) or not raw_filters:
            raise ValueError("options.json: char_cnn.filters must be a non-empty list of [width, count] pairs")
        lo, hi = BOUNDS["char_cnn.filters"]
        if len(raw_filters) > hi:
            raise ValueError(
                f"options.json: char_cnn.filters has {len(raw_filters)} filters, more than the supported {hi}"
            )
        filters = []
        for pair in raw_filters:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"options.json: each of char_cnn.filters must be [width, count], got {pair!r}")
            filters.append((_bounded(pair[0], "char_cnn.filters.width"), _bounded(pair[1], "char_cnn.filters.count")))
        emb = need(cnn, "embedding", "char_cnn")
        n_characters = _integer(cnn.get("n_characters", 262), "char_cnn.n_characters")
        if n_characters not in (261, 262):
            raise ValueError(
                f"options.json: char_cnn.n_characters must be 262 (261 in training files), got {n_characters}"
            )
        activation = cnn.get("activation", "relu")
        if activation not in ("relu", "tanh"):
            raise ValueError(f"options.json: char_cnn.activation must be 'relu' or 'tanh', got {activation!r}")
        if _integer(cnn.get("max_characters_per_token", 50), "char_cnn.max_characters_per_token") != 50:
            raise ValueError("options.json: max_characters_per_token must be 50 (the ELMo character encoding)")
        skip = lstm.get("use_skip_connections", False)
        if not isinstance(skip, bool):
            raise ValueError(f"options.json: lstm.use_skip_connections must be true or false, got {skip!r}")
        char_cnn = CharCNNConfig(
            filters=tuple(filters),
            n_highway=_bounded(need(cnn, "n_highway", "char_cnn"), "char_cnn.n_highway"),
            embedding_dim=_bounded(need(emb, "dim", "char_cnn.embedding"), "char_cnn.embedding.dim"),
            n_characters=n_characters,
            max_characters_per_token=50,
            activation=activation,
        )
        lo, hi = BOUNDS["char_cnn.n_filters"]
        if not lo <= char_cnn.n_filters <= hi:
            raise ValueError(
                f"options.json: the filter counts sum to {char_cnn.n_filters}, outside the supported range {lo}..{hi}"
            )
        lstm_cfg = LSTMConfig(
            dim=_bounded(need(lstm, "dim", "lstm"), "lstm.dim"),
            projection_dim=_bounded(need(lstm, "projection_dim", "lstm"), "lstm.projection_dim"),
            n_layers=_bounded(need(lstm, "n_layers", "lstm"), "lstm.n_layers"),
            cell_clip=_clip_value(lstm.get("cell_clip"), "lstm.cell_clip"),
            proj_clip=_clip_value(lstm.get("proj_clip"), "lstm.proj_clip"),
            use_skip_connections=skip,
        )
        extra = {k: v for k, v in options.items() if k not in ("char_cnn", "lstm")}
        return cls(char_cnn=char_cnn, lstm=lstm_cfg, extra=extra)

    @classmethod
    def from_options_json(cls, path: str | Path) -> BiLMConfig:
        """Read an ELMo options.json.

        Raises:
            FileNotFoundError: no such file.
            ValueError: as ``from_json_bytes`` (the message starts with the file's name).
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"options file not found: {path}")
        if path.stat().st_size > MAX_OPTIONS_BYTES:
            raise ValueError(
                f"{path.name}: {path.stat().st_size:,} bytes, more than an options file ({MAX_OPTIONS_BYTES:,} at most)"
            )
        return cls.from_json_bytes(path.read_bytes(), path.name)

    @classmethod
    def from_json_bytes(cls, data: bytes, label: str = "options.json") -> BiLMConfig:
        """Parse the bytes of an options.json (a file's, an upload's): size, UTF-8, JSON and nesting checked
        before ``from_dict``.

        Raises:
            ValueError: more than ``MAX_OPTIONS_BYTES``, not UTF-8, not JSON, a key given twice in one object
                or a NaN/Infinity constant (``loads_strict``), nested too deep (also the thousands of levels
                that would make Python's parser recurse without end), or as ``from_dict``; every message starts
                with ``label``.
        """
        if len(data) > MAX_OPTIONS_BYTES:
            raise ValueError(f"{label}: {len(data):,} bytes, more than an options file ({MAX_OPTIONS_BYTES:,} at most)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{label}: not a UTF-8 JSON options file") from None
        try:
            options = loads_strict(text, label)
        except JSONNestingError:
            raise ValueError(f"{label}: nested deeper than an options file ({MAX_OPTIONS_DEPTH} levels)") from None
        return cls.from_dict(options, label)

    def num_parameters(self) -> int:
        """Parameters of a biLM with this configuration (as ``BiLM.num_parameters``), computed without
        building it: char table 261 x E, CNN, highways, projection (when NF != P) and 2 L LSTM cells."""
        c, l = self.char_cnn, self.lstm
        nf, p, cell = c.n_filters, l.projection_dim, l.dim
        total = 261 * c.embedding_dim
        total += sum(width * c.embedding_dim * count + count for width, count in c.filters)
        total += c.n_highway * 2 * (nf * nf + nf)
        total += (nf * p + p) if nf != p else 0
        total += 2 * l.n_layers * (2 * p * 4 * cell + 4 * cell + cell * p)
        return total

    def inference_bytes(self, positions: int) -> int:
        """An estimate of the working memory, in bytes, of one float32 biLM forward pass (inference,
        stateless) over ``positions`` token positions (batch x (longest sentence + 2)), parameters not
        included. It is what grows with the input; the parameters (4 bytes each) come on top.

        Per position: the character ids (50 int64); the char CNN's output, a highway's two gates and the
        projection (3 NF + P); one LSTM layer's input projections for both directions, computed for every
        step at once (2 x 4C: the largest term for wide cells, ``lstm.LstmLayer``), its cell states (2C);
        and the L + 1 layers of 2P kept for the output, twice (the stack and its copy to numpy).
        Measured against real passes by ``benchmarks/working_memory.py`` (one thread: peak resident memory
        1.3-6.7x below it); with several threads a full one-word batch can exceed it by up to 1.5x, so callers
        that must stay within a limit keep a margin (docs/INPUT_RULES.md).
        """
        c, l = self.char_cnn, self.lstm
        per_position = 50 * 8 + 4 * (
            3 * c.n_filters + l.projection_dim + 2 * 4 * l.dim + 2 * l.dim + 2 * self.num_layers * self.output_dim
        )
        return positions * per_position

    def check_budget(self, max_parameters: int | None = None) -> None:
        """Refuse a model larger than ``max_parameters`` (default: $ELMO_MAX_PARAMETERS, else
        ``DEFAULT_MAX_PARAMETERS``) before anything is allocated.

        Raises:
            ValueError: the model is over the budget; the message gives both sizes.
        """
        import os

        if max_parameters is None:
            max_parameters = int(os.environ.get("ELMO_MAX_PARAMETERS", DEFAULT_MAX_PARAMETERS))
        size = self.num_parameters()
        if size > max_parameters:
            raise ValueError(
                f"options.json describes a model of {size:,} parameters ({size * 4 / 2**30:.1f} GiB "
                f"in float32), over this server's budget of {max_parameters:,} parameters"
            )

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
