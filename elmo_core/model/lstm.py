"""The biLSTM: forward and backward stacks of LSTM cells with projection, clipping and residuals.

Both directions run side by side in one batched matrix product per time step: every parameter has a
leading direction axis D = 2 (0 = forward LM, 1 = backward LM). Dims: B batch, T time (with
``<S>``/``</S>``), P projection size, C cell size, L layers.
Source: ELMO_SPEC.md sections 6-7 and 9 (TF ``LSTMCell`` with ``num_proj``, ``ResidualWrapper``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
from torch import nn

from elmo_core.model import onednn
from elmo_core.model.config import LSTMConfig

PRE_ROWS = 512  # rows (time steps x batch) of the input projection hoisted at a time at inference


@dataclass
class LSTMState:
    """Carried LSTM state, one entry per layer: h (2, B, P) and c (2, B, C), direction-major."""

    h: list[torch.Tensor]
    c: list[torch.Tensor]


class BiLSTMLayer(nn.Module):
    """One layer of both directions.

    Parameters keep the TF layout of ``LSTMCell/W_0`` split in two and gate blocks in TF order
    i, j, f, o; the +1.0 forget bias of TF's ``LSTMCell`` is added at run time, not stored.
    """

    def __init__(self, config: LSTMConfig):
        super().__init__()
        p, c = config.projection_dim, config.dim
        self.input_weight = nn.Parameter(torch.empty(2, p, 4 * c))  # rows 0..P-1 of W_0
        self.state_weight = nn.Parameter(torch.empty(2, p, 4 * c))  # rows P..2P-1 of W_0
        self.bias = nn.Parameter(torch.zeros(2, 4 * c))  # LSTMCell/B, no forget offset
        self.proj_weight = nn.Parameter(torch.empty(2, c, p))  # W_P_0, no bias
        forget = torch.zeros(4 * c)
        forget[2 * c : 3 * c] = 1.0
        self.register_buffer("forget_offset", forget, persistent=False)
        self.cell_clip = config.cell_clip
        self.proj_clip = config.proj_clip
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / self.state_weight.shape[-1] ** 0.5 * 2
        for w in (self.input_weight, self.state_weight, self.proj_weight):
            nn.init.uniform_(w, -bound, bound)
        nn.init.zeros_(self.bias)

    _compiled_step = None

    def step(self, pre_t: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One time step of both directions.

        Args: pre_t (2, B, 4C) input projection + bias (forget offset included); h (2, B, P); c (2, B, C).
        Returns: new h (2, B, P) and new c (2, B, C), both clipped when the options say so.
        """
        z = torch.baddbmm(pre_t, h, self.state_weight)
        # One sigmoid over all four blocks is cheaper than three small ones; the j block uses tanh.
        i, _, f, o = torch.sigmoid(z).chunk(4, dim=-1)
        j = torch.tanh(z[..., self.state_weight.shape[-1] // 4 : self.state_weight.shape[-1] // 2])
        c_new = torch.addcmul(f * c, i, j)
        if self.cell_clip:
            c_new = c_new.clamp(-self.cell_clip, self.cell_clip)
        h_new = torch.bmm(o * torch.tanh(c_new), self.proj_weight)
        if self.proj_clip:
            h_new = h_new.clamp(-self.proj_clip, self.proj_clip)
        return h_new, c_new

    def compile_step(self) -> None:
        """Use ``torch.compile`` for the time step (fuses the element-wise gate math; about 2-3x faster on
        CPU for the step loop, after a one-off compile of tens of seconds)."""
        self._compiled_step = torch.compile(self.step, dynamic=False)

    def native_params(self, direction: int) -> dict[str, torch.Tensor]:
        """This direction's weights in ``torch.nn.LSTM`` layout (gate order i, f, g, o), differentiably.

        TF keeps the blocks as i, j(=g), f, o and adds the forget bias at run time; torch wants
        i, f, g, o with the whole bias stored.
        """

        def reorder(w: torch.Tensor) -> torch.Tensor:  # (..., 4C) TF order -> (4C, ...) torch order
            i, j, f, o = w.chunk(4, dim=-1)
            return torch.cat([i, f, j, o], dim=-1).transpose(0, -1)

        bias = reorder((self.bias[direction] + self.forget_offset).unsqueeze(0)).squeeze(-1)
        return {
            "weight_ih_l0": reorder(self.input_weight[direction]),
            "weight_hh_l0": reorder(self.state_weight[direction]),
            "bias_ih_l0": bias,
            "bias_hh_l0": torch.zeros_like(bias),
            "weight_hr_l0": self.proj_weight[direction].t(),
        }

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, h: torch.Tensor, c: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Run one layer over time.

        Args:
            x: (2, T, B, P) inputs, time-major; direction 1 is already reversed within each
                sequence's length.
            mask: (B, T) bool, or None when the final state is not needed (padded steps then run
                too, which cannot affect valid steps because padding is always at the end).
            h, c: (2, B, P) and (2, B, C) initial state (not modified).

        Returns:
            outputs (2, T, B, P) (not masked), final h, final c (state at each row's own length).
        """
        needs_grad = torch.is_grad_enabled() and any(
            t.requires_grad for t in (x, h, c, self.input_weight, self.state_weight, self.proj_weight)
        )
        # autocast does not cast the out= and in-place operands of the in-place loop: functional there too.
        if needs_grad or self._compiled_step is not None or torch.is_autocast_enabled(x.device.type):
            return self._functional_loop(self.input_projection(x), mask, h, c)
        return self._inplace_loop(x, mask, h, c)

    def input_projection(self, x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """x (2, T, B, P) -> (2, T, B, 4C): ``x W_in + b`` (forget offset included) for all T steps in one
        bmm per direction, hoisted out of the time loop. (A broadcast matmul against
        ``input_weight.unsqueeze(1)`` would materialise the weight B times.)"""
        d, t, b, p = x.shape
        bias = (self.bias + self.forget_offset).unsqueeze(1)
        if out is None:
            return torch.baddbmm(bias, x.reshape(d, t * b, p), self.input_weight).view(d, t, b, -1)
        return torch.baddbmm(bias, x.reshape(d, t * b, p), self.input_weight, out=out.view(d, t * b, -1)).view(
            d, t, b, -1
        )

    def _functional_loop(self, pre, mask, h, c):
        """The differentiable time loop (training, or the compiled step); pre (2, T, B, 4C)."""
        outputs = []
        step_fn = self._compiled_step or self.step
        # unbind, not pre[:, t]: indexing would make backward allocate a full-size gradient per step.
        for t, pre_t in enumerate(pre.unbind(1)):
            h_new, c_new = step_fn(pre_t, h, c)
            if mask is not None:
                step = mask[:, t].view(1, -1, 1)
                c = torch.where(step, c_new, c)
                h = torch.where(step, h_new, h)
            else:
                c, h = c_new, h_new
            outputs.append(h_new)
        return torch.stack(outputs, dim=1), h, c

    def _inplace_loop(self, x, mask, h, c):
        """Inference time loop: the same arithmetic as ``step``, but the gates are computed in place in
        the step's block of the input projection and every per-step tensor lives in a buffer allocated
        once, so a step makes no allocations: large CPU allocations are fresh, page-faulted memory. (The oneDNN
        path of the largest weights is the exception: its products return new tensors.)

        The input projection is hoisted for blocks of steps of about ``PRE_ROWS`` rows (all steps at
        batch 1), into one reused buffer: at batch 64 the whole (2, T, B, 4C) projection is tens of MB,
        and a block that was just written is still in the cache when its steps read it.
        """
        d, steps, b, _ = x.shape
        cells = self.state_weight.shape[-1] // 4
        block = max(1, min(steps, -(-PRE_ROWS // b)))  # time steps per hoisted block
        buffer = x.new_empty(d, block, b, 4 * cells)
        # Time-major outputs: step t's (2, B, P) block is contiguous, so the projection writes straight into it
        # and it is the next step's h (no copy per step).
        out = x.new_empty(steps, d, b, self.proj_weight.shape[-1])
        c = c.clone()
        c_new = torch.empty_like(c)
        gated = torch.empty_like(c)
        # The largest weights (published Original) go through oneDNN, one direction at a time (module onednn);
        # not the hoisted input product, where MKL measured faster inside the embedder (docs/performance.md).
        state_w = (
            onednn.packed(self, "state", self.state_weight, out_in=False)
            if onednn.applies(self.state_weight[0], x)
            else None
        )
        proj_w = (
            onednn.packed(self, "proj", self.proj_weight, out_in=False)
            if onednn.applies(self.proj_weight[0], x)
            else None
        )
        # Into a contiguous buffer: in place on the strided view of the hoisted block, baddbmm_ falls back to one
        # addmm per direction, which at batch 1 took twice as long (92 against 44 us for Small's weights). Its gate
        # views are made once: at batch 1 a step is a few microseconds per operation, views included.
        z_buf = x.new_empty(d, b, 4 * cells)
        gates = self._gate_views(z_buf, cells)
        # Locals: a module attribute costs a Python-level lookup, counted per step at batch 1.
        state_weight, proj_weight, cell_clip, proj_clip = (
            self.state_weight,
            self.proj_weight,
            self.cell_clip,
            self.proj_clip,
        )
        for t in range(steps):
            if t % block == 0:
                pre = self.input_projection(x[:, t : t + block], buffer[:, : min(block, steps - t)]).unbind(1)
            if state_w is None:
                torch.baddbmm(pre[t % block], h, state_weight, out=z_buf)
                i, j, fo, f, o = gates
            else:
                z = pre[t % block]  # (2, B, 4C) view; each direction's block is contiguous
                for k in range(d):
                    z[k].add_(onednn.linear(h[k], state_w[k]))
                i, j, fo, f, o = self._gate_views(z, cells)
            i.sigmoid_()
            j.tanh_()
            fo.sigmoid_()  # f and o are adjacent: one call
            torch.mul(f, c, out=c_new)
            c_new.addcmul_(i, j)
            if cell_clip:
                c_new.clamp_(-cell_clip, cell_clip)
            torch.tanh(c_new, out=gated)
            gated.mul_(o)
            h_new = out[t]
            if proj_w is None:
                torch.bmm(gated, proj_weight, out=h_new)
            else:
                for k in range(d):
                    h_new[k] = onednn.linear(gated[k], proj_w[k])
            if proj_clip:
                h_new.clamp_(-proj_clip, proj_clip)
            if mask is not None:
                step = mask[:, t].view(1, -1, 1)
                c = torch.where(step, c_new, c)
                h = torch.where(step, h_new, h)
            else:
                c, c_new = c_new, c  # swap buffers: the old c is dead
                h = h_new
        return out.transpose(0, 1), h, c

    @staticmethod
    def _gate_views(z: torch.Tensor, cells: int) -> tuple[torch.Tensor, ...]:
        """Views of z (..., 4C) in TF gate order: i, j, (f and o together), f, o."""
        return (
            z[..., :cells],
            z[..., cells : 2 * cells],
            z[..., 2 * cells :],
            z[..., 2 * cells : 3 * cells],
            z[..., 3 * cells :],
        )


class BiLSTM(nn.Module):
    """L layers of forward and backward LSTMs; the directions are never mixed between layers."""

    def __init__(self, config: LSTMConfig, dropout: float = 0.0):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList(BiLSTMLayer(config) for _ in range(config.n_layers))
        # Training only (bilm-tf used 0.1 on every layer's input); a no-op in eval mode.
        self.dropout = nn.Dropout(dropout)

    def can_use_native(self, return_state: bool, state: LSTMState | None) -> bool:
        """PyTorch's fused LSTM (about twice as fast on CPU) has no clipping and we need no state out of
        it, so it serves unclipped models run from a zero state; results equal the step loop's to
        float rounding (tested)."""
        return not return_state and state is None and not self.config.cell_clip and not self.config.proj_clip

    def _native_layer(self, layer: BiLSTMLayer, inputs: torch.Tensor) -> torch.Tensor:
        from torch.func import functional_call

        if not hasattr(self, "_native"):
            p, c = self.config.projection_dim, self.config.dim
            # A parameter-less shell for functional_call; fork_rng so that building it (which draws
            # random initial weights) leaves the global RNG, and so dropout and resume, untouched.
            with torch.random.fork_rng(devices=[]):
                shell = nn.LSTM(p, c, proj_size=p).to(inputs.device)  # time-major, as inputs
            object.__setattr__(self, "_native", shell)
        with warnings.catch_warnings():
            # PyTorch notes that oneDNN lacks projected LSTMs and uses its own kernel: expected, not news.
            warnings.filterwarnings("ignore", message="LSTM with projections")
            return torch.stack(
                [functional_call(self._native, layer.native_params(d), (inputs[d],))[0] for d in range(2)]
            )

    def zero_state(self, batch_size: int, device=None, dtype=None) -> LSTMState:
        p, c, n = self.config.projection_dim, self.config.dim, self.config.n_layers
        return LSTMState(
            h=[torch.zeros(2, batch_size, p, device=device, dtype=dtype) for _ in range(n)],
            c=[torch.zeros(2, batch_size, c, device=device, dtype=dtype) for _ in range(n)],
        )

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, state: LSTMState | None = None, return_state: bool = False
    ) -> tuple[list[torch.Tensor], LSTMState | None]:
        """Run both directions.

        Args:
            x: (B, T, P) token representations with ``<S>``/``</S>``, right-padded.
            mask: (B, T) bool, True at real positions (boundaries included).
            state: initial state (zeros when None).
            return_state: also return the state after each row's last real step (for stateful use).

        Returns:
            outputs: L tensors (B, T, 2P) = [forward ; backward] per layer, residual included on
            layers >= 1 when ``use_skip_connections``, zeros at padded positions; and the final state
            (or None).
        """
        batch, steps, _ = x.shape
        lengths = mask.sum(dim=1, keepdim=True)
        pos = torch.arange(steps, device=x.device).unsqueeze(0)
        # The backward LM reads each sequence from its own last real token, not from the padded end.
        rev = torch.where(pos < lengths, lengths - 1 - pos, pos).unsqueeze(-1).expand(-1, -1, x.shape[-1])
        # Time-major (2, T, B, P) from here on: one time step of one direction is a contiguous block.
        inputs = torch.stack([x, x.gather(1, rev)], dim=0).transpose(1, 2).contiguous()
        native = self.can_use_native(return_state, state)
        if state is None:
            state = self.zero_state(batch, x.device, x.dtype)
        step_mask = mask if return_state else None
        keep = mask.t().unsqueeze(0).unsqueeze(-1).to(x.dtype)  # (1, T, B, 1)
        new_h, new_c, outputs = [], [], []
        for index, layer in enumerate(self.layers):
            if native:
                out, h, c = self._native_layer(layer, self.dropout(inputs)), None, None
            else:
                out, h, c = layer(self.dropout(inputs), step_mask, state.h[index], state.c[index])
            if index > 0 and self.config.use_skip_connections:
                out = out + inputs  # residual on the output only; the carried h stays the projection
            out = out * keep
            new_h.append(h)
            new_c.append(c)
            outputs.append(torch.cat([out[0].transpose(0, 1), out[1].transpose(0, 1).gather(1, rev)], dim=-1))
            inputs = out
        return outputs, (LSTMState(new_h, new_c) if return_state else None)
