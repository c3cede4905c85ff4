"""Layer 0: the context-free token representation (character CNN, highway layers, projection).

Dims: N tokens, W = 50 character slots, E char embedding size, K = widest filter, NF total filters,
P projection size.
Source: Peters et al. 2018 section 3.4; ELMO_SPEC.md sections 3-5 (bilm-tf ``_build_word_char_embeddings``).

How the convolution is computed (same function as the reference, different order of work)
----------------------------------------------------------------------------------------
Every filter of width w at window start s is a dot product of the w*E embedded characters s..s+w-1
with its kernel. All filters are zero-padded to the widest width K and stacked into one (K*E, NF)
matrix, so one GEMM per window start serves every width (the padded weights multiply characters
that the filter never looks at by exact zeros; about 16% extra multiply-adds for the published
filters, against one big GEMM instead of seven small ones). A window start's K*E inputs are K
consecutive embedded characters, i.e. a contiguous run of the (N, slots, E) embedding, so the window
matrix is a strided view (no unfold copy).

Most of a token's 50 slots are character padding (a 7-letter word fills 9). Every window that lies
wholly in the trailing padding has the same value for a given filter, so each filter's max-pool is
``max(max over windows that touch a real character, constant)``, the constant counted only for
tokens that have such a window. Tokens are sorted by length and processed in chunks, each chunk
only up to its own longest token, and the max-pool is a running ``torch.maximum`` over window starts
so the (N, windows, NF) pre-pool tensor never exists. The maxima are the reference's maxima; only
the summation order inside each dot product (and so the float rounding) differs.
"""

from __future__ import annotations

import torch
from torch import nn

from elmo_core.model import onednn
from elmo_core.model.chars import PAD_CHAR
from elmo_core.model.config import CharCNNConfig
from elmo_core.model.derived import cached

PAD_ID = PAD_CHAR + 1  # model-facing id of the character padding (ids are offset by +1)
CHUNK = 256  # tokens per GEMM block: a (CHUNK, NF) fp32 running max stays in the L2 cache
# A block whose (tokens, window starts, NF) products fit in this many float32 elements (8 MB) takes one matrix
# product and a max instead of the running max: at the published Small's batch 1 (22 tokens) 0.7 against 1.3 ms,
# one pass over the kernel instead of one per start; at 256 tokens the running max is faster (docs/performance.md).
ONE_PRODUCT_ELEMENTS = 1 << 21


class Highway(nn.Module):
    """One highway layer in the TensorFlow form used by bilm-tf.

    ``t = sigmoid(x W_carry + b_carry)``, ``g = relu(x W_transform + b_transform)``,
    ``y = t * g + (1 - t) * x``. The gate named "carry" gates the transformed branch, and the
    nonlinearity is always ReLU whatever ``char_cnn.activation`` says (ELMO_SPEC.md section 4).
    """

    def __init__(self, size: int):
        super().__init__()
        self.carry = nn.Linear(size, size)
        self.transform = nn.Linear(size, size)
        nn.init.constant_(self.carry.bias, -2.0)  # bilm-tf init: start close to the identity

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (N, NF) -> (N, NF), same dtype."""
        t = onednn.run_linear(self.carry, x, "sigmoid")
        g = onednn.run_linear(self.transform, x, "relu")
        # lerp(x, g, t) = x + t * (g - x) = t * g + (1 - t) * x in one pass instead of four. (Under
        # autocast t and g come out in the low precision while x may not: lerp wants one dtype.)
        return torch.lerp(x, g.to(x.dtype), t.to(x.dtype))


class CharCNN(nn.Module):
    """Character CNN + highway + projection.

    Parameters keep the layout of one ``nn.Conv1d`` per filter width (the weight-file mapping and
    checkpoints depend on it); ``forward`` computes the same function with stacked GEMMs (module doc).

    Args:
        config: the ``char_cnn`` block of options.json.
        projection_dim: P, the biLM's LSTM input size.
    """

    def __init__(self, config: CharCNNConfig, projection_dim: int):
        super().__init__()
        self.config = config
        # Row 0 is the padded-token row and stays zero (padding_idx keeps it out of training too).
        self.char_embedding = nn.Embedding(262, config.embedding_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(config.embedding_dim, count, width) for width, count in config.filters)
        nf = config.n_filters
        self.highways = nn.ModuleList(Highway(nf) for _ in range(config.n_highway))
        # bilm-tf only creates CNN_proj when NF != P.
        self.projection = nn.Linear(nf, projection_dim) if nf != projection_dim else None
        self._activation = torch.relu if config.activation == "relu" else torch.tanh
        self.max_width = max(width for width, _ in config.filters)
        # Width of the filter behind each of the NF output columns.
        widths = torch.cat([torch.full((count,), width) for width, count in config.filters])
        self.register_buffer("column_width", widths, persistent=False)

    def stacked_kernel(self) -> torch.Tensor:
        """All conv kernels as one (K * E, NF) matrix, row k * E + e = character k of the window,
        embedding unit e; rows k >= w are zero for a filter of width w. Differentiable."""
        k, e = self.max_width, self.config.embedding_dim
        blocks = []
        for conv in self.convs:
            count, _, width = conv.weight.shape
            w = conv.weight.permute(2, 1, 0)  # (width, E, count)
            if width < k:
                w = torch.cat([w, w.new_zeros(k - width, e, count)])
            blocks.append(w.reshape(k * e, count))
        return torch.cat(blocks, dim=1)

    def stacked_parameters(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(kernel (K * E, NF), bias (NF,), the all-padding window's value (NF,)): built again while any of them
        needs gradients, else cached and rebuilt only when a conv or the character embedding changes (in place or
        replaced). Building them cost 0.1-0.2 ms of a 14 ms batch-1 sentence of the published Small."""
        params = [p for conv in self.convs for p in (conv.weight, conv.bias)] + [self.char_embedding.weight]
        if torch.is_grad_enabled() and any(p.requires_grad for p in params):
            return self._stacked_parameters()
        return cached(self, "_derived", "stacked", params, self._stacked_parameters)

    def _stacked_parameters(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        kernel = self.stacked_kernel()
        bias = torch.cat([conv.bias for conv in self.convs])
        return kernel, bias, self.char_embedding.weight[PAD_ID].repeat(self.max_width) @ kernel

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Token vectors from character ids.

        Args:
            char_ids: LongTensor (..., 50) of model-facing ids 0..261.

        Returns:
            FloatTensor (..., P) in the parameters' dtype. A token of all-zero ids still gets a
            (non-zero) vector; callers mask padded positions.
        """
        lead = char_ids.shape[:-1]
        h = self._activation(self.pooled_convolutions(char_ids.reshape(-1, char_ids.shape[-1])))  # (N, NF)
        for highway in self.highways:
            h = highway(h)
        if self.projection is not None:
            h = onednn.run_linear(self.projection, h)
        return h.reshape(*lead, h.shape[-1])

    def pooled_convolutions(self, ids: torch.Tensor) -> torch.Tensor:
        """Max over window starts of every filter's convolution plus bias, before the activation.

        Args:
            ids: LongTensor (N, W) of model-facing character ids.

        Returns:
            (N, NF) in the parameters' dtype, columns in filter order (as the reference's concat).
        """
        n, slots = ids.shape
        kernel, bias, pad_window = self.stacked_parameters()  # (K * E, NF), (NF,), (NF,)
        if n == 0:
            return kernel.new_zeros(0, kernel.shape[1])
        emb_dim, k = self.config.embedding_dim, self.max_width
        # Content length: slots before the trailing run of padding (so windows starting at or after
        # it are all padding). An all-zero row (a padded token position) is given length 1: all of its
        # windows are zero vectors, so its max is the bias, as the reference computes.
        position = torch.arange(1, slots + 1, device=ids.device)
        content = torch.where(ids == PAD_ID, 0, position).amax(dim=1)
        # The constant value of an all-padding window, and which tokens have one for each column
        # (a width-w window fits after the content when content <= W - w).
        has_pad_window = content.unsqueeze(1) <= slots - self.column_width  # (N, NF)
        # Window starts to compute: at least one (an all-padding token's first window is a real one).
        length = torch.where((ids == 0).all(dim=1), 1, content).clamp(min=1)
        # Window start s is valid for width w only while s + w <= W; starts beyond it (long tokens only)
        # would read the zero padding we add after slot W, so their columns are masked to -inf.
        last_start = slots - self.column_width  # (NF,)
        first_invalid = slots - k + 1  # the first start at which some column is invalid
        # The running max (out= buffers) is for large inference blocks; autograd and autocast (which does not cast
        # out= arguments) and small blocks take one product over all starts and a max (``_one_product_max``).
        fast = not (
            torch.is_grad_enabled() and (kernel.requires_grad or self.char_embedding.weight.requires_grad)
        ) and not torch.is_autocast_enabled(ids.device.type)
        # One chunk on a GPU (kernel launches, not caches, are what counts there).
        chunk_size = CHUNK if ids.device.type == "cpu" else max(n, 1)
        order = torch.argsort(length)
        sorted_ids, sorted_len = ids[order], length[order].tolist()
        pooled = []
        for first in range(0, n, chunk_size):
            chunk = sorted_ids[first : first + chunk_size]
            starts = sorted_len[min(first + chunk_size, n) - 1]  # the chunk's longest content
            span = starts + k - 1
            if span > slots:
                chunk = torch.cat([chunk, chunk.new_zeros(chunk.shape[0], span - slots)], dim=1)
            emb = self.char_embedding(chunk[:, :span]).contiguous()  # (n_chunk, span, E)
            # windows[:, s] = the K embedded characters from slot s on, flattened (k-major): a view.
            windows = emb.as_strided((emb.shape[0], starts, k * emb_dim), (span * emb_dim, emb_dim, 1))
            if fast and len(chunk) * starts * kernel.shape[1] > ONE_PRODUCT_ELEMENTS:
                pooled.append(self._running_max(windows, kernel, last_start, first_invalid))
            else:
                pooled.append(self._one_product_max(windows, kernel, last_start, first_invalid))
        result = torch.cat(pooled) if len(pooled) > 1 else pooled[0]
        result = torch.where(has_pad_window[order], torch.maximum(result, pad_window), result)
        # Adding the bias after the max gives the same value: rounding is monotonic in the summand.
        unsorted = torch.empty_like(result).index_copy_(0, order, result) if fast else result[torch.argsort(order)]
        return unsorted + bias

    @staticmethod
    def _one_product_max(
        windows: torch.Tensor, kernel: torch.Tensor, last_start: torch.Tensor, first_invalid: int
    ) -> torch.Tensor:
        """Max over window starts of ``windows[:, s] @ kernel`` from one product over all starts: autograd and
        autocast, and inference blocks within ``ONE_PRODUCT_ELEMENTS``. windows (n, S, K*E) -> (n, NF)."""
        n, starts, width = windows.shape
        # One (n * S, K*E) copy of the overlapping windows, then mm: matmul on the strided view itself measured 3x
        # slower (22 tokens x 10 starts: 3.7 against 1.2 ms).
        y = torch.mm(windows.reshape(n * starts, width), kernel).view(n, starts, -1)
        if starts > first_invalid:  # in place: the product's backward needs only its inputs
            invalid = torch.arange(first_invalid, starts, device=y.device).unsqueeze(1) > last_start
            y[:, first_invalid:].masked_fill_(invalid, float("-inf"))
        return y.amax(dim=1)

    @staticmethod
    def _running_max(
        windows: torch.Tensor, kernel: torch.Tensor, last_start: torch.Tensor, first_invalid: int
    ) -> torch.Tensor:
        """Inference only: max over window starts of ``windows[:, s] @ kernel``, one (n, NF) buffer
        reused for every start (no (n, starts, NF) tensor): for blocks too large for ``_one_product_max``.
        windows (n, S, K*E) -> (n, NF)."""
        acc = torch.mm(windows[:, 0], kernel)
        tmp = torch.empty_like(acc)
        for s in range(1, windows.shape[1]):
            torch.mm(windows[:, s], kernel, out=tmp)
            if s >= first_invalid:
                tmp.masked_fill_(s > last_start, float("-inf"))
            torch.maximum(acc, tmp, out=acc)
        return acc
