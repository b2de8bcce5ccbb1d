"""The actor-critic model: encoder -> cores -> policy and value heads, composed as a `Wiring` says.

Every registered agent (`nalu_rl.agents.registry`) is this one module with a different `Wiring`. Per
step t, with f_t the encoder features (layer-normalised where the wiring asks) and s_t the stimulus:
  memory core (optional):  the registered `memory_core`, by default the LSTM
                           (h_t, c_t) = LSTM(concat of its inputs among f_t, s_t, m_t; h_{t-1}, c_{t-1})
                           or the GRU h_t = GRU(...; h_{t-1})
  counter core (optional): the registered `counter`, for example
                           accumulator  m_t = m_{t-1} + U(x_t)     (identity recurrence: no decay)
                           recurrent    m_t = U([x_t, m_{t-1}])    (a learned linear recurrence)
                           with U an arithmetic unit (NAC, NALU, NAU, NMU) and x_t the concat of its
                           inputs among f_t, s_t, 1 (a bias unit) and h_t; no squashing on m.
  heads:                   logits_t = actor(concat of its inputs among f_t, s_t, h_t, m_t)
                           value_t  = critic(concat of its inputs among f_t, s_t, h_t, m_t)
With `actor_count_clip` c > 0 the actor reads clamp(m_t, -c, c) instead of m_t; the critic and the
recurrence always use m_t itself. With `count_as_action` the actor's logit of action j also gets
-s * |c_t - j|, c_t the first entry of what the actor reads of the count; with `count_mixture` the
policy is a mixture over the head's own and each entry of m_t read as an answer, weighted by a
query of the actor's other inputs (`nalu_rl.agents.count_mixture`); with `critic_detached` the value
loss reaches the critic's head only, and with `critic_separate` the critic has an encoder and a memory
core of its own (`nalu_rl.agents.separate_critic`), whose state follows the cores' in the state. A
core that reads the other's output steps after it. Where episode_start[t] is True every core zeroes
its state (h, c and m) before step t. The project's cores live in `nalu_rl.agents.cores`, its
wirings in `nalu_rl.agents.catalog`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import gymnasium
import torch
from torch import Tensor, nn

from nalu_rl.agents.core import SEQUENCE_SIGNALS, Core
from nalu_rl.agents.count_action import CountAsAction
from nalu_rl.agents.count_mixture import CountMixture
from nalu_rl.agents.count_student import CountStudent
from nalu_rl.agents.distributions import ActionSizes, logits_width
from nalu_rl.agents.encoders import STIMULUS_KEY, MultiKeyEncoder, build_encoder, resolve_encoder_name
from nalu_rl.agents.observations import leaf_transform, observation_dict_space
from nalu_rl.agents.registry import agent_wiring, core_factory
from nalu_rl.agents.separate_critic import SeparateCritic
from nalu_rl.agents.wiring import COUNT_SIGNAL, MEMORY_SIGNAL, Wiring
from nalu_rl.units import total_regularizer


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
    """An actor-critic agent: encoder -> cores (per `wiring`) -> policy and value heads.

    forward(obs, episode_start, state) -> (logits [T, B, A], value [T, B], state after the last step).
    `num_actions` is an int for Discrete actions (A = num_actions) or one size per component for
    MultiDiscrete ones (A = their sum; `nalu_rl.agents.distributions` reads the logits). The
    observation space may be any nesting of Dict and Tuple over Box, Discrete, MultiDiscrete and
    MultiBinary: each leaf is transformed (`nalu_rl.agents.observations`) and encoded by `wiring.encoder`,
    or by the encoder `leaf_encoders` names for it (a checkpoint's record); what each leaf got is
    `observation_preprocessing`.
    The state is a flat tuple of float tensors with a leading batch axis, in the order of
    `state_names`: the memory core's ("lstm_h", "lstm_c" for the LSTM) when there is one, then the
    counter's (named after its unit) when there is a counter, then a separate critic's, then the
    draws of a teacher's handover by episodes (`nalu_rl.agents.count_student`). `cores` holds the core modules
    (`nalu_rl.agents.cores`) by the signal of their slot ("memory", "count") in that order, as
    submodules: their layers, parameters and buffers are the model's (state_dict keys
    `cores.memory.*`, `cores.count.*`). `step_order` is the order in which they step; `unrolled_alone`
    the cores that run all their steps at once instead (`Core.unroll`).
    """

    def __init__(
        self,
        observation_space: gymnasium.spaces.Space,
        num_actions: ActionSizes,
        wiring: Wiring,
        name: str = "",
        leaf_encoders: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        wiring.validate()
        if isinstance(num_actions, int):
            action_counts: tuple[int, ...] = (num_actions,)
        else:
            num_actions = action_counts = tuple(int(size) for size in num_actions)
        if not action_counts or min(action_counts) < 1:
            raise ValueError(f"num_actions must be >= 1 (each component), got {num_actions}")
        self.name = name
        self.wiring = wiring
        self.num_actions = num_actions
        space = observation_dict_space(observation_space)
        self.observation_space = space  # the flat Dict of leaves the model reads (and rollout buffers hold)
        # Parameterless transforms (one-hot, float), outside the module tree: they add no weights.
        self.observation_transforms = {key: leaf_transform(entry) for key, entry in space.spaces.items()}
        self.observation_keys = tuple(key for key in space.spaces if key != STIMULUS_KEY)
        if not self.observation_keys:
            raise ValueError(f"the observation has nothing to encode besides {STIMULUS_KEY!r}: {space}")
        encoded_spaces = {key: leaf.output_space for key, leaf in self.observation_transforms.items()}
        encoder_names = {
            key: resolve_encoder_name((leaf_encoders or {}).get(key, wiring.encoder), encoded_spaces[key])
            for key in self.observation_keys
        }
        self.observation_preprocessing = {
            key: {
                "space": str(entry),
                "transform": self.observation_transforms[key].kind,
                "encoder": encoder_names.get(key, "read by the cores"),
            }
            for key, entry in space.spaces.items()
        }
        self.encoder, encoder_width = _observation_encoder(encoder_names, encoded_spaces, wiring.feature_size)
        stimulus_space = encoded_spaces.get(STIMULUS_KEY)
        self.stimulus_width = math.prod(stimulus_space.shape) if stimulus_space is not None else 0
        self.feature_norm = nn.LayerNorm(encoder_width) if wiring.feature_norm else None
        widths = {
            "encoder": encoder_width,
            "stimulus": self.stimulus_width,
            "bias": 1,
            MEMORY_SIGNAL: wiring.memory_size,
            COUNT_SIGNAL: wiring.counter_size,
        }
        slots = []
        if wiring.has_memory:
            slots.append((MEMORY_SIGNAL, wiring.memory_core, wiring.memory_inputs, wiring.memory_size))
        if wiring.counter is not None:
            slots.append((COUNT_SIGNAL, wiring.counter, wiring.counter_inputs, wiring.counter_size))
        # Each core is a submodule under its slot's name, so no core's part can shadow another's or the
        # model's own; checkpoints written when the cores' layers sat at the model's top load through
        # `nalu_rl.checkpoint.upgrade_model_state`.
        self.cores = nn.ModuleDict()  # in the order of their states in `state_names`
        for signal, core_name, inputs, size in slots:
            core = _build_core(signal, core_name, inputs, widths, size, wiring)
            widths[signal] = core.output_size
            self.cores[signal] = core
        cores = tuple(self.cores.values())
        self.state_names: tuple[str, ...] = tuple(name for core in cores for name in core.state_names)
        if len(set(self.state_names)) != len(self.state_names):
            raise ValueError(f"the cores' state names must be distinct, got {self.state_names}")
        # A core that reads another core's signal steps after it.
        self.step_order = tuple(sorted(cores, key=lambda core: bool(core.reads_cores)))
        # A core that reads no other core and that no other core reads runs its T steps alone
        # (`Core.unroll`), which a core may compute other than step by step.
        read_by_cores = {name for core in cores for name in core.reads_cores}
        self.unrolled_alone = tuple(
            core for core in cores if not core.reads_cores and core.signal not in read_by_cores
        )
        self._stepwise_sequence_signals = tuple(
            {name: None for core in cores for name in core.stepwise_inputs if name in SEQUENCE_SIGNALS}
        )

        actor_width = sum(widths[name] for name in wiring.actor_inputs)
        self.actor = _head(actor_width, logits_width(num_actions), wiring.actor_hidden, 0.01)
        self.count_as_action = CountAsAction(num_actions) if wiring.count_as_action else None
        self.query_inputs = tuple(name for name in wiring.actor_inputs if name != COUNT_SIGNAL)
        self.count_mixture = (
            CountMixture(sum(widths[name] for name in self.query_inputs), widths[COUNT_SIGNAL], num_actions)
            if wiring.count_mixture
            else None
        )
        self.student = None
        if wiring.teacher_inputs:
            teacher_width = sum(widths[name] for name in wiring.teacher_inputs)
            teacher = _head(teacher_width, logits_width(num_actions), wiring.teacher_hidden, 0.01)
            self.student = CountStudent(
                teacher, num_actions, hold_teacher=wiring.teacher_held, by_episode=wiring.teacher_by_episode
            )
        if wiring.critic_separate:
            self.critic = _separate_critic(wiring, encoder_names, encoded_spaces, widths)
            self.state_names += self.critic.state_names
        else:
            self.critic = _head(
                sum(widths[name] for name in wiring.critic_inputs) + int(wiring.critic_reads_head),
                1,
                wiring.critic_hidden,
                1.0,
            )
        if self.student is not None:
            self.state_names += self.student.state_names

    @property
    def action_shape(self) -> tuple[int, ...]:
        """The shape of one env's action index: () for Discrete, (K,) for K MultiDiscrete components."""
        return () if isinstance(self.num_actions, int) else (len(self.num_actions),)

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> tuple[Tensor, ...]:
        """The zero recurrent state for `batch_size` episodes: a tuple of float32 tensors [B, ...]."""
        if device is None:
            device = next(self.parameters()).device
        cores = self.cores.values()
        state = tuple(zeros for core in cores for zeros in core.initial_state(batch_size, device))
        if isinstance(self.critic, SeparateCritic):
            state += self.critic.initial_state(batch_size, device)
        if self.student is not None:
            state += self.student.initial_state(batch_size, device)
        return state

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
        `initial_state` (or a previous call) -> logits [T, B, A], value [T, B], next state.
        """
        obs = {key: transform(obs[key]) for key, transform in self.observation_transforms.items()}
        encoder_input = obs if isinstance(self.encoder, MultiKeyEncoder) else obs[self.observation_keys[0]]
        features = self.encoder(encoder_input)
        if self.feature_norm is not None:
            features = self.feature_norm(features)
        leading = episode_start.shape
        self.describe_state(state)  # refuses a state of the wrong length
        student_state: tuple[Tensor, ...] = ()
        if self.student is not None and self.student.state_names:
            split = len(state) - len(self.student.state_names)
            state, student_state = state[:split], state[split:]
        if self.stimulus_width:
            # float32: bfloat16 features would round a T above 256
            stimulus = obs[STIMULUS_KEY].float().reshape(*leading, self.stimulus_width)
        else:
            stimulus = features.new_zeros(*leading, 0, dtype=torch.float32)
        bias = torch.ones(*leading, 1, device=features.device)
        signals = {"encoder": features, "stimulus": stimulus, "bias": bias}
        next_state = self._run_cores(signals, episode_start, state)
        actor_signals = signals
        if self.wiring.actor_count_clip > 0 and "count" in self.wiring.actor_inputs:
            clip = self.wiring.actor_count_clip
            actor_signals = {**signals, "count": signals["count"].clamp(-clip, clip)}
        if self.student is not None:
            # The student side learns from its own losses alone: what it reads of the features the
            # teacher and the critic share (all but its count) comes with the gradient stopped.
            actor_signals = {
                name: value if name == COUNT_SIGNAL else value.detach()
                for name, value in actor_signals.items()
            }
        logits = self.actor(torch.cat([actor_signals[name] for name in self.wiring.actor_inputs], -1))
        if self.count_as_action is not None:
            logits = logits + self.count_as_action(actor_signals[COUNT_SIGNAL][..., :1])
        if self.count_mixture is not None:
            query = torch.cat([signals[name] for name in self.query_inputs], -1)
            logits = self.count_mixture(query, signals[COUNT_SIGNAL], logits)
        student_plays = None
        if self.student is not None:
            teacher_input = torch.cat([signals[name] for name in self.wiring.teacher_inputs], -1)
            logits, student_plays, student_state = self.student.play(
                logits, teacher_input, episode_start, student_state
            )
        if isinstance(self.critic, SeparateCritic):
            keep = (~episode_start.bool()).to(features.dtype).unsqueeze(-1)
            critic_state = state[len(next_state) :]
            memory = signals.get(MEMORY_SIGNAL)
            value, critic_state = self.critic(
                encoder_input, stimulus, keep, critic_state, memory, student_plays
            )
            return logits, value, next_state + tuple(critic_state) + student_state
        critic_input = torch.cat([signals[name] for name in self.wiring.critic_inputs], -1)
        if self.wiring.critic_reads_head:
            # The value of an episode is that of the head playing it: the critic is told which.
            critic_input = torch.cat([critic_input, student_plays.unsqueeze(-1).to(critic_input.dtype)], -1)
        if self.wiring.critic_detached:
            critic_input = critic_input.detach()
        value = self.critic(critic_input).squeeze(-1)
        return logits, value, next_state + student_state

    def auxiliary_loss(self, mask: Tensor, handover: float = 0.0) -> Tensor:
        """The loss besides the actor-critic's of the last forward pass run with gradients, over its
        first steps that `mask` [T, B] covers (1: counted): the actor head's imitation of the teacher
        (`nalu_rl.agents.count_student`); a zero scalar for a model without one. With the wiring's
        `teacher_handover` the policy's handover is set to `handover` (the regulariser's ramp, 0 to 1),
        and the imitation's weight is 1 - handover: a teacher that no longer acts is no longer trained
        by the policy gradient, so the student stops following it."""
        if self.student is None:
            return mask.new_zeros((), dtype=torch.float32)
        if self.wiring.teacher_handover:
            self.student.handover.fill_(handover)
        weight = 1.0 - float(self.student.handover) if self.wiring.teacher_handover else 1.0
        return self.student.imitation(mask, weight)

    def acts_as_trained(self) -> bool:
        """Whether the policy acts as it will once training ends: False only while a wiring with
        `teacher_handover` has not yet handed the policy over completely to the student."""
        if self.student is None or not self.wiring.teacher_handover:
            return True
        return float(self.student.handover) >= 1.0

    def _run_cores(
        self, signals: dict[str, Tensor], episode_start: Tensor, state: tuple[Tensor, ...]
    ) -> tuple[Tensor, ...]:
        """Step the cores through the sequence; adds their outputs [T, B, ...] to `signals` and returns
        the state after the last step (in `state_names` order).
        """
        cores = tuple(self.cores.values())
        core_states, offset = {}, 0
        for core in cores:
            core_states[core] = state[offset : offset + len(core.state_names)]
            offset += len(core.state_names)
        if not cores:
            return ()
        keep = (~episode_start.bool()).to(signals["encoder"].dtype).unsqueeze(-1)
        for core in self.unrolled_alone:
            signals[core.signal], core_states[core] = core.unroll(signals, core_states[core], keep)
        sequence_steps = {name: signals[name].unbind(0) for name in self._stepwise_sequence_signals}
        stepped = tuple(core for core in self.step_order if core not in self.unrolled_alone)
        prepared = {core: core.prepare(signals) for core in stepped}
        outputs: dict[Core, list[Tensor]] = {core: [] for core in stepped}
        for t, keep_t in enumerate(keep.unbind(0) if stepped else ()):
            step_signals = {name: values[t] for name, values in sequence_steps.items()}
            for core in stepped:
                step_prepared = None if prepared[core] is None else prepared[core][t]
                output, core_states[core] = core.step(step_prepared, step_signals, core_states[core], keep_t)
                step_signals[core.signal] = output
                outputs[core].append(output)
        for core, core_outputs in outputs.items():
            signals[core.signal] = torch.stack(core_outputs)
        return tuple(tensor for core in cores for tensor in core_states[core])

    def extra_repr(self) -> str:
        return f"name={self.name!r}, observation_keys={self.observation_keys}"


def _build_core(
    signal: str, name: str, inputs: tuple[str, ...], widths: Mapping[str, int], size: int, wiring: Wiring
) -> Core:
    """The registered core `name` for the slot of `signal`; ValueError if the factory builds no `Core`."""
    core = core_factory(name)(inputs, widths, size, wiring)
    if not isinstance(core, Core):
        raise ValueError(f"core {name!r} built a {type(core).__name__}, not a nalu_rl Core")
    core.signal = signal
    return core


def _observation_encoder(
    encoder_names: Mapping[str, str], encoded_spaces: Mapping[str, gymnasium.spaces.Space], feature_size: int
) -> tuple[nn.Module, int]:
    """The encoder of the observation's entries named in `encoder_names`, and its output width: one
    entry's encoder itself (the names checkpoints have always used), or a `MultiKeyEncoder` of several."""
    encoders = {
        key: build_encoder(name, encoded_spaces[key], feature_size) for key, name in encoder_names.items()
    }
    width = sum(getattr(encoder, "output_width", feature_size) for encoder in encoders.values())
    return (next(iter(encoders.values())) if len(encoders) == 1 else MultiKeyEncoder(encoders)), width


def _separate_critic(
    wiring: Wiring,
    encoder_names: Mapping[str, str],
    encoded_spaces: Mapping[str, gymnasium.spaces.Space],
    widths: Mapping[str, int],
) -> SeparateCritic:
    """The critic of a wiring's `critic_separate`: an encoder and (with `critic_own_memory`) a memory
    core of the actor's kinds, with weights of their own, and a head on the critic's inputs among them,
    the stimulus, (without a core of its own) the actor's memory and (with `critic_reads_head`) which
    head plays."""
    encoder, encoder_width = _observation_encoder(encoder_names, encoded_spaces, wiring.feature_size)
    feature_norm = nn.LayerNorm(encoder_width) if wiring.feature_norm else None
    own_widths = {**widths, "encoder": encoder_width}
    core = None
    if wiring.critic_own_memory:
        core_inputs = tuple(name for name in wiring.memory_inputs if name in SEQUENCE_SIGNALS)
        core = _build_core(
            MEMORY_SIGNAL, wiring.memory_core, core_inputs, own_widths, wiring.memory_size, wiring
        )
        own_widths[MEMORY_SIGNAL] = core.output_size
    head_width = sum(own_widths[name] for name in wiring.critic_inputs) + int(wiring.critic_reads_head)
    head = _head(head_width, 1, wiring.critic_hidden, 1.0)
    return SeparateCritic(
        encoder, feature_norm, core, head, wiring.critic_inputs, reads_head=wiring.critic_reads_head
    )


def make_agent(
    name: str, observation_space: gymnasium.spaces.Space, num_actions: ActionSizes = 5, **options: Any
) -> ActorCritic:
    """Build the actor-critic agent registered as `name` for this observation space.

    `options` override fields of the agent's Wiring (memory_size, counter_size, unit, ...); an
    unknown name or option raises ValueError.
    """
    return ActorCritic(observation_space, num_actions, agent_wiring(name, **options), name=name)
