"""The actor-critic model: an encoder, a recurrent core wired as a `Wiring` says, a policy and a value head.

Every agent of the registry (`agents.registry`) is this one module with a different `Wiring`. Per
step t, with f_t the encoder features and s_t the stimulus:
  LSTM (optional):    (h_t, c_t) = LSTM(concat of its inputs among f_t, s_t, m_t; h_{t-1}, c_{t-1})
  counter (optional): accumulator  m_t = m_{t-1} + U(x_t)          (identity recurrence: no decay)
                      recurrent    m_t = U([x_t, m_{t-1}])         (a learned linear recurrence)
                      with U an arithmetic unit (NAC, NALU, NAU, NMU) and x_t the concat of its
                      inputs among f_t, s_t, 1 (a bias unit) and h_t; no squashing on m.
  heads:              logits_t = actor(concat of its inputs among f_t, s_t, h_t, m_t)
                      value_t  = critic(concat of its inputs among f_t, s_t, h_t, m_t)
Where episode_start[t] is True the whole recurrent state (h, c and m) is zeroed before step t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import gymnasium
import torch
from torch import Tensor, nn
from torch.autograd.function import once_differentiable

from agents.encoders import make_encoder
from nalu_rl.recurrent import RecurrentUnit
from nalu_rl.units import make_unit, total_regularizer

LSTM_INPUTS = ("encoder", "stimulus", "count")
COUNTER_INPUTS = ("encoder", "stimulus", "bias", "lstm")
HEAD_INPUTS = ("encoder", "stimulus", "lstm", "count")
COUNTER_KINDS = ("accumulator", "recurrent")


@dataclass(frozen=True)
class Wiring:
    """How a core is assembled: what the LSTM, the counter and each head read (see the module docstring).

    lstm_inputs: the LSTM's inputs among "encoder", "stimulus", "count"; empty means no LSTM.
    counter: None (no counter), "accumulator" or "recurrent".
    counter_inputs: the counter's inputs among "encoder", "stimulus", "bias", "lstm".
    actor_inputs / critic_inputs: each head's inputs among "encoder", "stimulus", "lstm", "count".
    actor_hidden / critic_hidden: 0 for a linear head, else the width of one hidden ReLU layer.
    unit: the arithmetic unit of the counter ("nac", "nalu", "nau", "nmu").
    counter_size, lstm_size, feature_size: widths of the counter state, the LSTM and the encoder.
    """

    lstm_inputs: tuple[str, ...] = ()
    counter: str | None = None
    counter_inputs: tuple[str, ...] = ()
    actor_inputs: tuple[str, ...] = ()
    critic_inputs: tuple[str, ...] = ()
    actor_hidden: int = 0
    critic_hidden: int = 0
    unit: str = "nac"
    counter_size: int = 8
    lstm_size: int = 128
    feature_size: int = 256

    @property
    def has_lstm(self) -> bool:
        """Whether the core has an LSTM."""
        return bool(self.lstm_inputs)

    def validate(self) -> None:
        """Raise ValueError if the wiring names an unknown input or cannot be computed step by step."""
        groups = {
            "lstm_inputs": (self.lstm_inputs, LSTM_INPUTS),
            "counter_inputs": (self.counter_inputs, COUNTER_INPUTS),
            "actor_inputs": (self.actor_inputs, HEAD_INPUTS),
            "critic_inputs": (self.critic_inputs, HEAD_INPUTS),
        }
        for field_name, (names, allowed) in groups.items():
            unknown = [name for name in names if name not in allowed]
            if unknown or len(set(names)) != len(names):
                raise ValueError(f"{field_name} must be distinct names among {allowed}, got {names}")
        if self.counter is not None and self.counter not in COUNTER_KINDS:
            raise ValueError(f"counter must be None or one of {COUNTER_KINDS}, got {self.counter!r}")
        if (self.counter is None) == bool(self.counter_inputs):
            raise ValueError("counter_inputs must be given exactly when there is a counter")
        if not self.actor_inputs or not self.critic_inputs:
            raise ValueError("actor_inputs and critic_inputs must not be empty")
        uses = set(self.lstm_inputs) | set(self.actor_inputs) | set(self.critic_inputs)
        if "count" in uses and self.counter is None:
            raise ValueError("'count' is read but the wiring has no counter")
        uses |= set(self.counter_inputs)
        if "lstm" in uses and not self.has_lstm:
            raise ValueError("'lstm' is read but the wiring has no LSTM")
        if "count" in self.lstm_inputs and "lstm" in self.counter_inputs:
            raise ValueError("the LSTM and the counter cannot read each other at the same step")
        for name in ("actor_hidden", "critic_hidden"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("counter_size", "lstm_size", "feature_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


WIRING_OPTIONS = tuple(field.name for field in fields(Wiring))


def accumulate(increments: Tensor, keep: Tensor, initial: Tensor, chunk_steps: int = 32) -> Tensor:
    """The accumulator's state after every step, m_t = keep_t * m_{t-1} + increments_t with m_{-1} = initial.

    increments [T, B, k], keep [T, B, 1] (1.0, or 0.0 where an episode starts), initial [B, k]
    -> [T, B, k]. The same values as the step-by-step loop (each m_t sums the same increments).
    """
    if increments.shape[0] == 1:
        return (initial * keep[0] + increments[0]).unsqueeze(0)
    counts = []
    for increments_chunk, keep_chunk in zip(
        increments.split(chunk_steps), keep.split(chunk_steps), strict=True
    ):
        steps = increments_chunk.shape[0]
        # Increment s still counts at step t >= s when no episode started in (s, t], i.e. when as many
        # episodes had started by step s as by step t; the initial state counts while none has.
        starts_so_far = (1.0 - keep_chunk[..., 0]).cumsum(0)
        same_episode = starts_so_far.unsqueeze(1) == starts_so_far.unsqueeze(0)
        causal = torch.ones(steps, steps, dtype=torch.bool, device=keep.device).tril_().unsqueeze(-1)
        weights = (same_episode & causal).to(increments.dtype)
        carried = (starts_so_far == 0).to(increments.dtype).unsqueeze(-1)
        chunk = torch.einsum("tsb,sbk->tbk", weights, increments_chunk) + carried * initial
        counts.append(chunk)
        initial = chunk[-1]
    return counts[0] if len(counts) == 1 else torch.cat(counts)


def lstm_sequence(
    input_gates: Tensor, keep: Tensor, h: Tensor, c: Tensor, weight: Tensor
) -> tuple[Tensor, Tensor]:
    """An LSTM over T steps whose input projection is already computed.

    input_gates [T, B, 4H] (gate order input, forget, cell, output; biases included), keep
    [T, B, 1] (0.0 zeroes h and c before that step), state h, c [B, H], hidden-to-hidden weight
    [4H, H] -> (h after every step [T, B, H], c after the last step [B, H]). Per step:
    gates = input_gates_t + (keep_t h) @ weight.T, c = sigma(f) keep_t c + sigma(i) tanh(g),
    h = sigma(o) tanh(c).
    """
    if torch.is_grad_enabled() and any(x.requires_grad for x in (input_gates, h, c, weight)):
        return _LSTMSequence.apply(input_gates, keep, h, c, weight)
    hs, c, _ = _lstm_forward(input_gates, keep, h, c, weight, save=False)
    return hs, c


def _lstm_forward(
    input_gates: Tensor, keep: Tensor, h: Tensor, c: Tensor, weight: Tensor, save: bool
) -> tuple[Tensor, Tensor, tuple[Tensor, ...]]:
    """The LSTM loop without autograd; with `save`, also what the backward pass reads."""
    steps, batch, width = input_gates.shape
    hidden = width // 4
    cell_slice = slice(2 * hidden, 3 * hidden)
    weight_t = weight.t()
    hs = input_gates.new_empty(steps, batch, hidden)
    if save:
        starts_h, starts_c, tanh_cells = (input_gates.new_empty(steps, batch, hidden) for _ in range(3))
        activations = input_gates.new_empty(steps, batch, width)
    for t in range(steps):
        h = torch.mul(h, keep[t], out=starts_h[t]) if save else h * keep[t]
        c = torch.mul(c, keep[t], out=starts_c[t]) if save else c * keep[t]
        gates = input_gates[t] + torch.mm(h, weight_t)
        act = torch.sigmoid(gates, out=activations[t]) if save else torch.sigmoid(gates)
        torch.tanh(gates[:, cell_slice], out=act[:, cell_slice])
        input_gate, forget_gate, cell_gate, output_gate = act.chunk(4, dim=-1)
        c = torch.addcmul(input_gate * cell_gate, forget_gate, c)
        tanh_c = torch.tanh(c, out=tanh_cells[t]) if save else torch.tanh(c)
        h = torch.mul(output_gate, tanh_c, out=hs[t])
    saved = (starts_h, starts_c, activations, tanh_cells) if save else ()
    return hs, c, saved


class _LSTMSequence(torch.autograd.Function):
    """`lstm_sequence` with a hand-written backward: a few fused operations per step, and the
    hidden-to-hidden weight gradient as one matrix product over the whole sequence."""

    @staticmethod
    def forward(
        ctx: torch.autograd.function.FunctionCtx,
        input_gates: Tensor,
        keep: Tensor,
        h: Tensor,
        c: Tensor,
        weight: Tensor,
    ) -> tuple[Tensor, Tensor]:
        hs, c, saved = _lstm_forward(input_gates, keep, h, c, weight, save=True)
        ctx.save_for_backward(keep, weight, *saved)
        return hs, c

    @staticmethod
    @once_differentiable
    def backward(
        ctx: torch.autograd.function.FunctionCtx, grad_hs: Tensor, grad_c: Tensor
    ) -> tuple[Tensor | None, ...]:
        keep, weight, starts_h, starts_c, activations, tanh_cells = ctx.saved_tensors
        steps, batch, width = activations.shape
        hidden = width // 4
        input_gate, forget_gate, cell_gate, output_gate = activations.chunk(4, dim=-1)
        # d activation / d pre-activation: s (1 - s) for the sigmoids, 1 - g^2 for the tanh.
        slopes = activations * (1.0 - activations)
        slopes[..., 2 * hidden : 3 * hidden] = 1.0 - cell_gate.square()
        # d gates_t = [dc g, dc c_prev, dc i, dh tanh(c)] * slopes: the partners of dc and dh.
        partners = torch.cat([cell_gate, starts_c, input_gate, tanh_cells], dim=-1).mul_(slopes)
        output_to_cell = output_gate * (1.0 - tanh_cells.square())
        forget_keep = forget_gate * keep
        grad_gates = torch.empty_like(activations)
        grad_h, grad_c = None, grad_c
        for t in range(steps - 1, -1, -1):
            dh = grad_hs[t] if grad_h is None else grad_hs[t] + grad_h
            dc = torch.addcmul(grad_c, dh, output_to_cell[t])
            torch.mul(
                dc.unsqueeze(1),
                partners[t, :, : 3 * hidden].view(batch, 3, hidden),
                out=grad_gates[t, :, : 3 * hidden].view(batch, 3, hidden),
            )
            torch.mul(dh, partners[t, :, 3 * hidden :], out=grad_gates[t, :, 3 * hidden :])
            grad_h = torch.mm(grad_gates[t], weight).mul_(keep[t])
            grad_c = dc * forget_keep[t]
        grad_weight = None
        if ctx.needs_input_grad[4]:
            grad_weight = grad_gates.reshape(-1, width).t().mm(starts_h.reshape(-1, hidden))
        return grad_gates, None, grad_h, grad_c, grad_weight


def _head(in_features: int, out_features: int, hidden: int, output_gain: float) -> nn.Module:
    """A linear layer, or an MLP with one hidden ReLU layer; the output layer's weights scaled by gain."""
    layers: list[nn.Module] = []
    if hidden:
        layers += [nn.Linear(in_features, hidden), nn.ReLU()]
        in_features = hidden
    output = nn.Linear(in_features, out_features)
    with torch.no_grad():
        output.weight.mul_(output_gain)
        output.bias.zero_()
    return nn.Sequential(*layers, output)


class ActorCritic(nn.Module):
    """An actor-critic agent for TimeTrack: encoder, recurrent core (per `wiring`), policy and value heads.

    forward(obs, episode_start, state) -> (logits [T, B, A], value [T, B], state after the last step).
    The state is a flat tuple of float tensors with a leading batch axis, in the order of
    `state_names`: "lstm_h", "lstm_c" when there is an LSTM, then the counter state (named after
    its unit) when there is a counter.
    """

    def __init__(
        self, observation_space: gymnasium.spaces.Dict, num_actions: int, wiring: Wiring, name: str = ""
    ) -> None:
        super().__init__()
        wiring.validate()
        if num_actions < 1:
            raise ValueError(f"num_actions must be >= 1, got {num_actions}")
        self.name = name
        self.wiring = wiring
        self.num_actions = num_actions
        self.observation_key, self.encoder = make_encoder(observation_space, wiring.feature_size)
        widths = {
            "encoder": wiring.feature_size,
            "stimulus": 1,
            "bias": 1,
            "lstm": wiring.lstm_size,
            "count": wiring.counter_size,
        }

        self.state_names: tuple[str, ...] = ()
        if wiring.has_lstm:
            hidden = wiring.lstm_size
            # The LSTM is written out so that the input (and count) projections of a whole [T, B]
            # sequence are one matrix product; only the hidden projection runs in `lstm_sequence`'s loop.
            self._lstm_static_inputs = tuple(name for name in wiring.lstm_inputs if name != "count")
            static_width = sum(widths[name] for name in self._lstm_static_inputs)
            self.lstm_input = nn.Linear(static_width, 4 * hidden) if static_width else None
            self.lstm_hidden = nn.Linear(hidden, 4 * hidden, bias=self.lstm_input is None)
            reads_count = "count" in wiring.lstm_inputs
            self.lstm_count = nn.Linear(wiring.counter_size, 4 * hidden, bias=False) if reads_count else None
            bound = 1.0 / math.sqrt(hidden)
            for parameter in self._lstm_parameters():
                nn.init.uniform_(parameter, -bound, bound)
            self.state_names += ("lstm_h", "lstm_c")

        if wiring.counter is not None:
            counter_width = sum(widths[name] for name in wiring.counter_inputs)
            if wiring.counter == "accumulator":
                self.counter_unit = make_unit(wiring.unit, counter_width, wiring.counter_size)
            else:
                self.counter_unit = RecurrentUnit(wiring.unit, counter_width, wiring.counter_size)
            self.state_names += (wiring.unit,)

        self.actor = _head(
            sum(widths[name] for name in wiring.actor_inputs), num_actions, wiring.actor_hidden, 0.01
        )
        self.critic = _head(sum(widths[name] for name in wiring.critic_inputs), 1, wiring.critic_hidden, 1.0)

    def _lstm_parameters(self) -> list[nn.Parameter]:
        layers = (self.lstm_input, self.lstm_hidden, self.lstm_count)
        return [parameter for layer in layers if layer is not None for parameter in layer.parameters()]

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> tuple[Tensor, ...]:
        """The zero recurrent state for `batch_size` episodes: a tuple of float32 tensors [B, ...]."""
        if device is None:
            device = next(self.parameters()).device
        sizes = {"lstm_h": self.wiring.lstm_size, "lstm_c": self.wiring.lstm_size}
        return tuple(
            torch.zeros(batch_size, sizes.get(name, self.wiring.counter_size), device=device)
            for name in self.state_names
        )

    def describe_state(self, state: tuple[Tensor, ...]) -> dict[str, Tensor]:
        """Named views of a recurrent state, e.g. {"lstm_h": [B, 128], "lstm_c": [B, 128], "nac": [B, 8]}."""
        if len(state) != len(self.state_names):
            raise ValueError(f"expected a state of {len(self.state_names)} tensors, got {len(state)}")
        return dict(zip(self.state_names, state, strict=True))

    def regularizer(self) -> Tensor:
        """The sum of the arithmetic units' regularisers (a zero scalar when the model has none)."""
        return total_regularizer(self)

    def forward(
        self, obs: dict[str, Tensor], episode_start: Tensor, state: tuple[Tensor, ...]
    ) -> tuple[Tensor, Tensor, tuple[Tensor, ...]]:
        """Run T steps of B episodes: obs tensors [T, B, ...], episode_start bool [T, B], state from
        `initial_state` (or a previous call) -> logits [T, B, num_actions], value [T, B], next state.
        """
        wiring = self.wiring
        features = self.encoder(obs[self.observation_key])
        stimulus = obs["stimulus"].to(features.dtype)
        inputs = {"encoder": features, "stimulus": stimulus, "bias": torch.ones_like(stimulus)}
        keep = (~episode_start.bool()).to(features.dtype).unsqueeze(-1)
        state_before = self.describe_state(state)
        next_state = {}
        # The LSTM and the counter never read each other at the same step (`Wiring.validate`), so
        # each runs over the whole sequence in turn: first whichever the other reads.
        if wiring.counter is not None and "lstm" not in wiring.counter_inputs:
            inputs["count"] = self._count(inputs, keep, state_before[wiring.unit])
        if wiring.has_lstm:
            inputs["lstm"], next_state["lstm_c"] = self._lstm(
                inputs, keep, state_before["lstm_h"], state_before["lstm_c"]
            )
            next_state["lstm_h"] = inputs["lstm"][-1]
        if wiring.counter is not None and "lstm" in wiring.counter_inputs:
            inputs["count"] = self._count(inputs, keep, state_before[wiring.unit])
        if wiring.counter is not None:
            next_state[wiring.unit] = inputs["count"][-1]
        logits = self.actor(torch.cat([inputs[name] for name in wiring.actor_inputs], -1))
        value = self.critic(torch.cat([inputs[name] for name in wiring.critic_inputs], -1)).squeeze(-1)
        return logits, value, tuple(next_state[name] for name in self.state_names)

    def _lstm(self, inputs: dict[str, Tensor], keep: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        """The LSTM's h after every step [T, B, H] and its c after the last step, from state (h, c)."""
        steps, batch = keep.shape[:2]
        if self.lstm_input is not None:
            static = [inputs[name] for name in self._lstm_static_inputs]
            input_gates = self.lstm_input(static[0] if len(static) == 1 else torch.cat(static, -1))
        else:
            input_gates = self.lstm_hidden.bias.expand(steps, batch, -1)
        if self.lstm_count is not None:
            input_gates = input_gates + self.lstm_count(inputs["count"])
        return lstm_sequence(input_gates, keep, h, c, self.lstm_hidden.weight)

    def _count(self, inputs: dict[str, Tensor], keep: Tensor, m: Tensor) -> Tensor:
        """The counter state after every step [T, B, counter_size], from state m [B, counter_size]."""
        x = torch.cat([inputs[name] for name in self.wiring.counter_inputs], -1)
        if self.wiring.counter == "accumulator":
            # Its increments depend on no state: one unit call covers the whole sequence.
            return accumulate(self.counter_unit(x), keep, m)
        counts = []
        for x_t, keep_t in zip(x.unbind(0), keep.unbind(0), strict=True):
            m = self.counter_unit.step(x_t, m * keep_t)
            counts.append(m)
        return torch.stack(counts)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, observation_key={self.observation_key!r}"
