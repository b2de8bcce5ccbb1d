"""The actor-critic model: encoder -> cores -> policy and value heads, composed as a `Wiring` says.

Every agent of the registry (`nalu_rl.agents.registry`) is this one module with a different `Wiring`. Per
step t, with f_t the encoder features (layer-normalised where the wiring asks) and s_t the stimulus:
  LSTM core (optional):    (h_t, c_t) = LSTM(concat of its inputs among f_t, s_t, m_t; h_{t-1}, c_{t-1})
  counter core (optional): accumulator  m_t = m_{t-1} + U(x_t)     (identity recurrence: no decay)
                           recurrent    m_t = U([x_t, m_{t-1}])    (a learned linear recurrence)
                           with U an arithmetic unit (NAC, NALU, NAU, NMU) and x_t the concat of its
                           inputs among f_t, s_t, 1 (a bias unit) and h_t; no squashing on m.
  heads:                   logits_t = actor(concat of its inputs among f_t, s_t, h_t, m_t)
                           value_t  = critic(concat of its inputs among f_t, s_t, h_t, m_t)
With `actor_count_clip` c > 0 the actor reads clamp(m_t, -c, c) instead of m_t; the critic and the
recurrence always use m_t itself. A core that reads the other's output steps after it. Where
episode_start[t] is True every core zeroes its state (h, c and m) before step t. The cores
themselves live in `nalu_rl.agents.cores`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import gymnasium
import torch
from torch import Tensor, nn

from nalu_rl.agents.cores import (
    SEQUENCE_SIGNALS,
    AccumulatorCore,
    Core,
    LinearRecurrenceCore,
    LSTMCore,
    RecurrentUnitCore,
)
from nalu_rl.agents.encoders import make_encoder
from nalu_rl.units import total_regularizer

LSTM_INPUTS = ("encoder", "stimulus", "count")
COUNTER_INPUTS = ("encoder", "stimulus", "bias", "lstm")
HEAD_INPUTS = ("encoder", "stimulus", "lstm", "count")
COUNTER_KINDS = ("accumulator", "recurrent", "linear-recurrence")


@dataclass(frozen=True)
class Wiring:
    """How a core is assembled: what the LSTM, the counter and each head read (see the module docstring).

    lstm_inputs: the LSTM's inputs among "encoder", "stimulus", "count"; empty means no LSTM.
    counter: None (no counter), "accumulator", "recurrent" (both built on `unit`) or
        "linear-recurrence" (the LRU's diagonal linear recurrence; `unit` is not used).
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
    """An actor-critic agent for TimeTrack: encoder -> cores (per `wiring`) -> policy and value heads.

    forward(obs, episode_start, state) -> (logits [T, B, A], value [T, B], state after the last step).
    The state is a flat tuple of float tensors with a leading batch axis, in the order of
    `state_names`: "lstm_h", "lstm_c" when there is an LSTM, then the counter state (named after
    its unit) when there is a counter. `cores` holds the core modules (`nalu_rl.agents.cores`) in that
    order, `step_order` the order in which they step.
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
        cores: list[Core] = []
        if wiring.has_lstm:
            cores.append(LSTMCore(wiring.lstm_inputs, widths, wiring.lstm_size))
        if wiring.counter is not None:
            counter_width = sum(widths[name] for name in wiring.counter_inputs)
            if wiring.counter == "linear-recurrence":
                cores.append(LinearRecurrenceCore(wiring.counter_inputs, counter_width, wiring.counter_size))
            else:
                counter_core = AccumulatorCore if wiring.counter == "accumulator" else RecurrentUnitCore
                cores.append(
                    counter_core(wiring.unit, wiring.counter_inputs, counter_width, wiring.counter_size)
                )
        # The cores stay out of the module tree (a plain tuple): their layers are registered here under
        # the names checkpoints have always used (lstm_input, lstm_hidden, lstm_count, counter_unit).
        for core in cores:
            for layer_name, layer in core.named_children():
                self.add_module(layer_name, layer)
        self.cores = tuple(cores)  # in the order of their states in `state_names`
        self.state_names: tuple[str, ...] = tuple(name for core in cores for name in core.state_names)
        # A core that reads another core's signal steps after it.
        self.step_order = tuple(sorted(cores, key=lambda core: bool(core.reads_cores)))
        self._stepwise_sequence_signals = tuple(
            {name: None for core in cores for name in core.stepwise_inputs if name in SEQUENCE_SIGNALS}
        )

        self.actor = _head(
            sum(widths[name] for name in wiring.actor_inputs), num_actions, wiring.actor_hidden, 0.01
        )
        self.critic = _head(sum(widths[name] for name in wiring.critic_inputs), 1, wiring.critic_hidden, 1.0)

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> tuple[Tensor, ...]:
        """The zero recurrent state for `batch_size` episodes: a tuple of float32 tensors [B, ...]."""
        if device is None:
            device = next(self.parameters()).device
        return tuple(zeros for core in self.cores for zeros in core.initial_state(batch_size, device))

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
        features = self.encoder(obs[self.observation_key])
        if self.feature_norm is not None:
            features = self.feature_norm(features)
        stimulus = obs["stimulus"].float()  # exact: bfloat16 features would round a T above 256
        signals = {"encoder": features, "stimulus": stimulus, "bias": torch.ones_like(stimulus)}
        next_state = self._run_cores(signals, episode_start, state)
        actor_signals = signals
        if self.wiring.actor_count_clip > 0 and "count" in self.wiring.actor_inputs:
            clip = self.wiring.actor_count_clip
            actor_signals = {**signals, "count": signals["count"].clamp(-clip, clip)}
        logits = self.actor(torch.cat([actor_signals[name] for name in self.wiring.actor_inputs], -1))
        value = self.critic(torch.cat([signals[name] for name in self.wiring.critic_inputs], -1)).squeeze(-1)
        return logits, value, next_state

    def _run_cores(
        self, signals: dict[str, Tensor], episode_start: Tensor, state: tuple[Tensor, ...]
    ) -> tuple[Tensor, ...]:
        """Step the cores through the sequence; adds their outputs [T, B, ...] to `signals` and returns
        the state after the last step (in `state_names` order).
        """
        self.describe_state(state)  # refuses a state of the wrong length
        core_states, offset = {}, 0
        for core in self.cores:
            core_states[core] = state[offset : offset + len(core.state_names)]
            offset += len(core.state_names)
        if not self.cores:
            return ()
        keep_steps = (~episode_start.bool()).to(signals["encoder"].dtype).unsqueeze(-1).unbind(0)
        prepared = {core: core.prepare(signals) for core in self.cores}
        sequence_steps = {name: signals[name].unbind(0) for name in self._stepwise_sequence_signals}
        outputs: dict[Core, list[Tensor]] = {core: [] for core in self.cores}
        for t, keep in enumerate(keep_steps):
            step_signals = {name: values[t] for name, values in sequence_steps.items()}
            for core in self.step_order:
                core_prepared = prepared[core]
                output, core_states[core] = core.step(
                    None if core_prepared is None else core_prepared[t], step_signals, core_states[core], keep
                )
                step_signals[core.signal] = output
                outputs[core].append(output)
        for core, core_outputs in outputs.items():
            signals[core.signal] = torch.stack(core_outputs)
        return tuple(tensor for core in self.cores for tensor in core_states[core])

    def extra_repr(self) -> str:
        return f"name={self.name!r}, observation_key={self.observation_key!r}"
