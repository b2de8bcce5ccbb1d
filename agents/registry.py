"""The agents by their --agent name: each a core wiring (see `nalu_rl.agents.model`), built by `make_agent`.

What each wiring measured is in docs/RESULTS.md (the wirings without a run of their own there: its
section "The wirings of the prototype").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import gymnasium

from nalu_rl.agents.model import WIRING_OPTIONS, ActorCritic, Wiring

_ENCODER_AND_STIMULUS = ("encoder", "stimulus")
_STIMULUS_AND_BIAS = ("stimulus", "bias")


def lstm_wiring() -> Wiring:
    """The paper's A3C baseline: LSTM(128) on [encoder, stimulus]; linear policy and value heads on h."""
    return Wiring(lstm_inputs=_ENCODER_AND_STIMULUS, actor_inputs=("lstm",), critic_inputs=("lstm",))


def nac_paper_wiring() -> Wiring:
    """The paper-literal NAC agent: LSTM(128) on [encoder, stimulus] and beside it a recurrent NAC
    n_t = NAC([h_t, stimulus, n_{t-1}]) (8 units); both heads linear on [h, n].
    """
    return Wiring(
        lstm_inputs=_ENCODER_AND_STIMULUS,
        counter="recurrent",
        counter_inputs=("lstm", "stimulus"),
        actor_inputs=("lstm", "count"),
        critic_inputs=("lstm", "count"),
    )


def nac_paper_bias_wiring() -> Wiring:
    """As nac-paper, but the recurrent NAC reads only time-invariant inputs:
    n_t = NAC([stimulus, 1, n_{t-1}]).
    """
    return replace(nac_paper_wiring(), counter_inputs=_STIMULUS_AND_BIAS)


def lstm_norm_wiring() -> Wiring:
    """The lstm baseline with its encoder features layer-normalised before the LSTM reads them.

    It tests whether weak pixel features at initialisation slow the LSTM (docs/RESULTS.md, "The
    LSTM on pixels, and the runs without normalisation").
    """
    return replace(lstm_wiring(), feature_norm=True)


def nac_critic_lstm_wiring() -> Wiring:
    """The LSTM serves the critic only; the actor times the delay with a NAC accumulator.

    m_t = m_{t-1} + NAC([stimulus, 1]) (8 units, identity recurrence so a count cannot decay);
    actor: MLP(128) on [encoder, m]; critic: linear on [h, m], the LSTM(128) reading
    [encoder, stimulus]. No LSTM signal reaches the policy, so the policy's timing stays on the
    linear count.
    """
    return Wiring(
        lstm_inputs=_ENCODER_AND_STIMULUS,
        counter="accumulator",
        counter_inputs=_STIMULUS_AND_BIAS,
        actor_inputs=("encoder", "count"),
        critic_inputs=("lstm", "count"),
        actor_hidden=128,
    )


def nac_beside_lstm_wiring() -> Wiring:
    """LSTM(128) on [encoder, stimulus] beside a NAC accumulator m_t = m_{t-1} + NAC([stimulus, 1]);
    both heads MLP(128) on [h, m].
    """
    return Wiring(
        lstm_inputs=_ENCODER_AND_STIMULUS,
        counter="accumulator",
        counter_inputs=_STIMULUS_AND_BIAS,
        actor_inputs=("lstm", "count"),
        critic_inputs=("lstm", "count"),
        actor_hidden=128,
        critic_hidden=128,
    )


def nac_beside_blind_lstm_wiring() -> Wiring:
    """As nac-beside-lstm, with the stimulus hidden from the LSTM (it reads the encoder only)."""
    return replace(nac_beside_lstm_wiring(), lstm_inputs=("encoder",))


def nac_lstm_feeds_wiring() -> Wiring:
    """The LSTM feeds the accumulator: m_t = m_{t-1} + NAC([h_t, stimulus, 1]); both heads MLP(128) on
    [encoder, m] only.
    """
    return Wiring(
        lstm_inputs=_ENCODER_AND_STIMULUS,
        counter="accumulator",
        counter_inputs=("lstm", "stimulus", "bias"),
        actor_inputs=("encoder", "count"),
        critic_inputs=("encoder", "count"),
        actor_hidden=128,
        critic_hidden=128,
    )


def nac_lstm_reads_wiring() -> Wiring:
    """The accumulator feeds the LSTM: m_t = m_{t-1} + NAC([stimulus, 1]), LSTM(128) on
    [encoder, stimulus, m_t]; actor MLP(128) on [encoder, m], critic linear on [h, m].

    The critic-LSTM wiring with the count also given to the LSTM, so that the value can use the
    exact count; the actor's path is unchanged.
    """
    return replace(nac_critic_lstm_wiring(), lstm_inputs=("encoder", "stimulus", "count"))


def nac_scalar_count_wiring() -> Wiring:
    """The `nac` wiring with a one-unit accumulator: m_t = m_{t-1} + NAC([stimulus, 1]) is a single number.

    With 8 units the count spans two directions, T and t, and the actor may read them apart; at
    T = 40 it then meets pairs (T, t) never seen in training (t <= 12 there). One unit can hold only
    a * T + b * t, so solving the task pushes it towards a multiple of the time left, T - t, whose
    values at large T are the values it took in training.
    """
    return replace(nac_critic_lstm_wiring(), counter_size=1)


def nau_scalar_count_wiring() -> Wiring:
    """nac-scalar-count with a NAU: its regulariser pulls the single count to exactly +-(T - t) + c."""
    return replace(nac_scalar_count_wiring(), unit="nau")


def nau_saturated_count_wiring() -> Wiring:
    """nau-scalar-count whose actor reads the count saturated: clamp(m, -10, 10); the critic reads m.

    Once learned, the NAU count is +-(T - t - 1), the time left. No target on the 5x5 grid is more
    than 8 steps away, so beyond 8 more time left cannot change the right decision. The actor reads
    clamp(m, -10, 10): 10 exceeds every distance the policy must cover (so a saturated count means
    "more time than any path needs"), and it is below the largest count of training (11 at the
    onset of T = 12), so the policy meets the saturated value in training. A count of 1000 then
    looks to the policy exactly like one of 10. The critic does not act and reads m unclipped.
    """
    return replace(nau_scalar_count_wiring(), actor_count_clip=10.0)


def signed_count_wiring() -> Wiring:
    """nau-saturated-count with a signed NAU: its regulariser pulls both count weights to -1 or +1,
    never to 0, so the count can settle only on +-(T - t - 1) or +-(T + t + 1), never on nothing.

    The sparsity regulariser of the NAU pulls a weight below 1/2 to 0; a count whose weights are
    still small when it enters is lost, or held by the policy at a fraction of the time left.
    Measured (docs/RESULTS.md) with the training options --regularizer-gate-success 0.5
    --regularizer-start-steps 0 --regularizer-end-steps 1000000 --unit-lr-scale 10, which `train`
    applies to it by default (AGENT_TRAINING_DEFAULTS in nalu_rl/config.py). The default agent.
    """
    return replace(nau_saturated_count_wiring(), unit="signed-nau")


def nac_ff_wiring() -> Wiring:
    """No LSTM: a NAC accumulator m_t = m_{t-1} + NAC([stimulus, 1]) and MLP(128) actor and critic on
    [encoder, m]; the reference for how far a pure counter extrapolates.
    """
    return Wiring(
        counter="accumulator",
        counter_inputs=_STIMULUS_AND_BIAS,
        actor_inputs=("encoder", "count"),
        critic_inputs=("encoder", "count"),
        actor_hidden=128,
        critic_hidden=128,
    )


def nac_recurrent_ff_wiring() -> Wiring:
    """No LSTM: a learned linear recurrence n_t = NAC([stimulus, 1, n_{t-1}]) and MLP(128) heads on
    [encoder, n]. The recurrence can decay, unlike the accumulator's identity.
    """
    return replace(nac_ff_wiring(), counter="recurrent")


def nac_wiring() -> Wiring:
    """The LSTM core augmented with a NAC, in the best measured wiring: nac-critic-lstm with its encoder
    features layer-normalised.

    The normalisation keeps the scale of the features that the actor's MLP reads directly, which
    guards the policy against collapsing to one action (docs/RESULTS.md, "The LSTM on pixels, and
    the runs without normalisation").
    """
    return replace(nac_critic_lstm_wiring(), feature_norm=True)


def lru_wiring() -> Wiring:
    """The `nac` wiring with the NAC accumulator replaced by a diagonal linear recurrence (the LRU of
    Orvieto et al. 2023, 8 complex modes, on [stimulus, 1]): the strongest non-arithmetic baseline.

    Both counters are linear states in the same slot; only the NAC's has an identity recurrence and
    weights biased towards -1, 0 and 1. What the LRU lacks is the arithmetic, not the linearity.
    """
    return replace(nac_wiring(), counter="linear-recurrence")


def nalu_wiring() -> Wiring:
    """The `nac` wiring with a NALU (gated add / multiply, tied weights) as the counter's unit."""
    return replace(nac_wiring(), unit="nalu")


def nau_wiring() -> Wiring:
    """The `nac` wiring with a NAU (Madsen & Johansen; weights in [-1, 1], sparsity regulariser)."""
    return replace(nac_wiring(), unit="nau")


def nau_ff_wiring() -> Wiring:
    """nac-ff with a NAU: its regulariser pulls the increments to exactly -1, 0 or +1."""
    return replace(nac_ff_wiring(), unit="nau")


WIRINGS: dict[str, Callable[[], Wiring]] = {
    "lstm": lstm_wiring,
    "nac": nac_wiring,
    "lru": lru_wiring,
    "lstm-norm": lstm_norm_wiring,
    "nalu": nalu_wiring,
    "nau": nau_wiring,
    "nac-ff": nac_ff_wiring,
    "nac-paper": nac_paper_wiring,
    "nac-paper-bias": nac_paper_bias_wiring,
    "nac-critic-lstm": nac_critic_lstm_wiring,
    "nac-beside-lstm": nac_beside_lstm_wiring,
    "nac-beside-blind-lstm": nac_beside_blind_lstm_wiring,
    "nac-lstm-feeds": nac_lstm_feeds_wiring,
    "nac-lstm-reads": nac_lstm_reads_wiring,
    "nac-recurrent-ff": nac_recurrent_ff_wiring,
    "nac-scalar-count": nac_scalar_count_wiring,
    "nau-scalar-count": nau_scalar_count_wiring,
    "nau-saturated-count": nau_saturated_count_wiring,
    "signed-count": signed_count_wiring,
    "nau-ff": nau_ff_wiring,
}
AGENT_NAMES: tuple[str, ...] = tuple(WIRINGS)


def agent_wiring(name: str, **options: Any) -> Wiring:
    """The wiring of agent `name`, with any Wiring field overridden by `options` (e.g. counter_size=4)."""
    if name not in WIRINGS:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(AGENT_NAMES)}")
    unknown = sorted(set(options) - set(WIRING_OPTIONS))
    if unknown:
        raise ValueError(f"unknown agent options {unknown}; known options: {', '.join(WIRING_OPTIONS)}")
    wiring = replace(WIRINGS[name](), **options)
    wiring.validate()
    return wiring


def make_agent(
    name: str, observation_space: gymnasium.spaces.Dict, num_actions: int = 5, **options: Any
) -> ActorCritic:
    """Build the actor-critic agent registered as `name` for this observation space.

    `options` override fields of the agent's Wiring (lstm_size, counter_size, unit, ...); an
    unknown name or option raises ValueError.
    """
    return ActorCritic(observation_space, num_actions, agent_wiring(name, **options), name=name)


def describe_agents() -> dict[str, str]:
    """The first line of each agent's description, by name (for --help texts)."""
    first_paragraphs = {name: (factory.__doc__ or "").split("\n\n")[0] for name, factory in WIRINGS.items()}
    return {name: " ".join(paragraph.split()) for name, paragraph in first_paragraphs.items()}
