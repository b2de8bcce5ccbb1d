"""The actor-critic model: an encoder, a recurrent core wired as a `Wiring` says, a policy and a value head.

Every agent of the registry (`agents.registry`) is this one module with a different `Wiring`. Per
step t, with f_t the encoder features (layer-normalised where the wiring asks) and s_t the stimulus:
  LSTM (optional):    (h_t, c_t) = LSTM(concat of its inputs among f_t, s_t, m_t; h_{t-1}, c_{t-1})
  counter (optional): accumulator  m_t = m_{t-1} + U(x_t)          (identity recurrence: no decay)
                      recurrent    m_t = U([x_t, m_{t-1}])         (a learned linear recurrence)
                      with U an arithmetic unit (NAC, NALU, NAU, NMU) and x_t the concat of its
                      inputs among f_t, s_t, 1 (a bias unit) and h_t; no squashing on m.
  heads:              logits_t = actor(concat of its inputs among f_t, s_t, h_t, m_t)
                      value_t  = critic(concat of its inputs among f_t, s_t, h_t, m_t)
                      (with `actor_count_clip` c > 0 the actor reads clamp(m_t, -c, c) instead of
                      m_t; the critic and the recurrence always use m_t itself)
Where episode_start[t] is True the whole recurrent state (h, c and m) is zeroed before step t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import gymnasium
import torch
from torch import Tensor, nn

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
    feature_norm: layer-normalise the encoder features before anything reads them.
    actor_count_clip: 0 (off) or c > 0: the actor reads the count clamped to [-c, c] (the critic and
        the counter's own recurrence read it unclamped), so a count beyond c looks the same to the
        policy however large it grows.
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
    feature_norm: bool = False
    actor_count_clip: float = 0.0

    @property
    def has_lstm(self) -> bool:
        """Whether the core has an LSTM."""
        return bool(self.lstm_inputs)

    @property
    def policy_reads_lstm(self) -> bool:
        """Whether the actor head depends on the LSTM, directly or through a counter that reads it."""
        through_count = "count" in self.actor_inputs and "lstm" in self.counter_inputs
        return "lstm" in self.actor_inputs or through_count

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
        if not self.actor_count_clip >= 0:  # also rejects NaN
            raise ValueError(f"actor_count_clip must be >= 0, got {self.actor_count_clip}")
        if self.actor_count_clip and "count" not in self.actor_inputs:
            raise ValueError("actor_count_clip is set but the actor does not read 'count'")
        for name in ("counter_size", "lstm_size", "feature_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain values (lists for tuples), storable in a weights-only checkpoint."""
        return {field.name: _plain(getattr(self, field.name)) for field in fields(self)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Wiring:
        """The validated Wiring of `to_dict` output; raises ValueError on unknown or invalid fields."""
        unknown = sorted(set(values) - set(WIRING_OPTIONS))
        if unknown:
            raise ValueError(f"unknown wiring fields {unknown}")
        wiring = cls(**{name: _frozen(value) for name, value in values.items()})
        wiring.validate()
        return wiring


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


WIRING_OPTIONS = tuple(field.name for field in fields(Wiring))


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
        self.feature_norm = nn.LayerNorm(wiring.feature_size) if wiring.feature_norm else None
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
            # The LSTM is written out so that the input projection of a whole [T, B] sequence is one
            # matrix product; only the hidden (and count) projections run inside the time loop.
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
        steps, batch = episode_start.shape[:2]
        features = self.encoder(obs[self.observation_key])
        if self.feature_norm is not None:
            features = self.feature_norm(features)
        stimulus = obs["stimulus"].to(features.dtype)
        inputs = {"encoder": features, "stimulus": stimulus, "bias": torch.ones_like(stimulus)}
        keep = (~episode_start.bool()).to(features.dtype).unsqueeze(-1)
        named_state = self.describe_state(state)
        h, c = named_state.get("lstm_h"), named_state.get("lstm_c")
        m = named_state.get(wiring.unit) if wiring.counter is not None else None

        counter_reads_lstm = "lstm" in wiring.counter_inputs
        increments = None
        if wiring.has_lstm:
            if self.lstm_input is not None:
                lstm_gates = self.lstm_input(torch.cat([inputs[n] for n in self._lstm_static_inputs], -1))
            else:
                lstm_gates = features.new_zeros(steps, batch, 4 * wiring.lstm_size)
        if wiring.counter is not None and not counter_reads_lstm:
            counter_x = torch.cat([inputs[name] for name in wiring.counter_inputs], -1)
            if wiring.counter == "accumulator":
                # Its increments depend on no state: one unit call covers the whole sequence.
                increments = self.counter_unit(counter_x)

        hs, ms = [], []
        keep_steps = keep.unbind(0)
        gate_steps = lstm_gates.unbind(0) if wiring.has_lstm else None
        increment_steps = increments.unbind(0) if increments is not None else None
        for t in range(steps):
            if wiring.has_lstm:
                h, c = h * keep_steps[t], c * keep_steps[t]
            if m is not None:
                m = m * keep_steps[t]
                if increments is not None:
                    m = m + increment_steps[t]
                elif not counter_reads_lstm:
                    m = self._counter_step(m, counter_x[t])
            if wiring.has_lstm:
                gates = gate_steps[t] + self.lstm_hidden(h)
                if self.lstm_count is not None:
                    gates = gates + self.lstm_count(m)
                input_gate, forget_gate, cell_gate, output_gate = gates.chunk(4, dim=-1)
                c = torch.sigmoid(forget_gate) * c + torch.sigmoid(input_gate) * torch.tanh(cell_gate)
                h = torch.sigmoid(output_gate) * torch.tanh(c)
                hs.append(h)
            if m is not None and counter_reads_lstm:
                x = [h if name == "lstm" else inputs[name][t] for name in wiring.counter_inputs]
                m = self._counter_step(m, torch.cat(x, -1))
            if m is not None:
                ms.append(m)

        if hs:
            inputs["lstm"] = torch.stack(hs)
        if ms:
            inputs["count"] = torch.stack(ms)
        actor_inputs = inputs
        if wiring.actor_count_clip:
            clip = wiring.actor_count_clip
            actor_inputs = {**inputs, "count": inputs["count"].clamp(-clip, clip)}
        logits = self.actor(torch.cat([actor_inputs[name] for name in wiring.actor_inputs], -1))
        value = self.critic(torch.cat([inputs[name] for name in wiring.critic_inputs], -1)).squeeze(-1)
        next_state = {"lstm_h": h, "lstm_c": c, wiring.unit: m}
        return logits, value, tuple(next_state[name] for name in self.state_names)

    def _counter_step(self, m: Tensor, x: Tensor) -> Tensor:
        """The counter state after one step from state m [B, k] with input x [B, in]."""
        if self.wiring.counter == "accumulator":
            return m + self.counter_unit(x)
        return self.counter_unit.step(x, m)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, observation_key={self.observation_key!r}"
