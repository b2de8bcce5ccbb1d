"""The project's own agents, registered by `--agent` name through the public `register_agent`.

What each measured is in docs/RESULTS.md (the wirings without a run of their own there: its section
"The wirings of the prototype"). Notation: h the memory core's (LSTM's) output, m the count, x_t
the counter's inputs; an accumulator is m_t = m_{t-1} + U(x_t) (identity recurrence, a count cannot
decay), a recurrent counter m_t = U([x_t, m_{t-1}]) (a learned linear recurrence, which can).
"""

from __future__ import annotations

from dataclasses import replace

from nalu_rl.agents import flat_encoder as _flat_encoder  # noqa: F401  (registers the encoder "flat")
from nalu_rl.agents.registry import register_agent
from nalu_rl.agents.wiring import Wiring

_ENCODER_AND_STIMULUS = ("encoder", "stimulus")
_STIMULUS_AND_BIAS = ("stimulus", "bias")

LSTM = Wiring(memory_inputs=_ENCODER_AND_STIMULUS, actor_inputs=("memory",), critic_inputs=("memory",))
NAC_PAPER = Wiring(
    memory_inputs=_ENCODER_AND_STIMULUS,
    counter="recurrent",
    counter_inputs=("memory", "stimulus"),
    actor_inputs=("memory", "count"),
    critic_inputs=("memory", "count"),
)
# No LSTM signal reaches the policy, so the policy's timing stays on the linear count.
NAC_CRITIC_LSTM = Wiring(
    memory_inputs=_ENCODER_AND_STIMULUS,
    counter="accumulator",
    counter_inputs=_STIMULUS_AND_BIAS,
    actor_inputs=("encoder", "count"),
    critic_inputs=("memory", "count"),
    actor_hidden=128,
)
NAC_BESIDE_LSTM = Wiring(
    memory_inputs=_ENCODER_AND_STIMULUS,
    counter="accumulator",
    counter_inputs=_STIMULUS_AND_BIAS,
    actor_inputs=("memory", "count"),
    critic_inputs=("memory", "count"),
    actor_hidden=128,
    critic_hidden=128,
)
NAC_LSTM_FEEDS = Wiring(
    memory_inputs=_ENCODER_AND_STIMULUS,
    counter="accumulator",
    counter_inputs=("memory", "stimulus", "bias"),
    actor_inputs=("encoder", "count"),
    critic_inputs=("encoder", "count"),
    actor_hidden=128,
    critic_hidden=128,
)
NAC_FF = Wiring(
    counter="accumulator",
    counter_inputs=_STIMULUS_AND_BIAS,
    actor_inputs=("encoder", "count"),
    critic_inputs=("encoder", "count"),
    actor_hidden=128,
    critic_hidden=128,
)
# The normalisation keeps the scale of the features that the actor's MLP reads directly, which guards
# the policy against collapsing to one action (RESULTS, "The LSTM on pixels, and the runs without
# normalisation").
NAC = replace(NAC_CRITIC_LSTM, feature_norm=True)
# With 8 units the count spans two directions, T and t, and the actor may read them apart; one unit
# can hold only a * T + b * t, so solving the task pushes it towards a multiple of the time left.
NAC_SCALAR_COUNT = replace(NAC_CRITIC_LSTM, counter_size=1)
NAU_SCALAR_COUNT = replace(NAC_SCALAR_COUNT, unit="nau")
# Once learned, the NAU count is +-(T - t - 1). No target on the 5x5 grid is more than 8 steps away,
# so beyond that more time left cannot change the right decision; 10 exceeds every distance and is
# below the largest count of training (11 at the onset of T = 12), so the policy meets the saturated
# value in training and a count of 1000 looks to it exactly like one of 10.
NAU_SATURATED_COUNT = replace(NAU_SCALAR_COUNT, actor_count_clip=10.0)
# The sparsity regulariser of the NAU pulls a weight below 1/2 to 0, so a count whose weights are
# still small when it enters is lost; the signed NAU's pulls them to -1 or +1 only.
SIGNED_COUNT = replace(NAU_SATURATED_COUNT, unit="signed-nau")

# signed-count whose count reads learned events instead of [stimulus, 1]: what to count is learned
# from the reward, the same wiring for every timing task (it reads neither the task's id nor options).
# Its unit is the NAU: the count reads more inputs than it needs (each event and its complement), and
# the NAU's regulariser pulls each weight to -1, 0 or +1, so the ones it does not need can go to 0;
# snapped, so that a weight the regulariser has brought near an integer counts as exactly that.
LEARNED_COUNT = replace(
    SIGNED_COUNT, counter="event-counter", counter_inputs=_ENCODER_AND_STIMULUS, unit="snap-nau"
)

# learned-count taught by a head on the LSTM (agents/count_student.py): a linear teacher head on the
# LSTM's h learns the training range as `lstm` does; the actor head (the student: the MLP on the
# encoder and the count) imitates it at every step, and the policy passes to the student by episodes,
# as fast as the student keeps up (--handover-earned). The count's phase bits toggle where the
# observation changes, so that cues open and close the intervals it counts (agents/change_counter.py);
# what it adds a step is used as -1, 0 or +1 (whole steps), its weights are free (the grid NAU). The
# critic reads the LSTM and which head plays the episode. Its tuning:
# docs/journal/2026-12-07-count-student-handover.md and the rounds after it, the last
# docs/journal/2026-12-07-count-student-whole-steps.md.
TAUGHT_COUNT = replace(
    LEARNED_COUNT,
    counter="change-counter-whole-steps",
    unit="grid-nau",
    critic_inputs=("memory",),
    teacher_inputs=("memory",),
    teacher_handover=True,
    teacher_by_episode=True,
    critic_reads_head=True,
)

# A count per learned value, read at the value the observation asks about (POPGym's Count Recall: a card
# dealt and a card asked about per step). 16 counts cover Count Recall Hard's 13 values; the actor reads
# the count asked for as the index of its answer (`count_as_action`), so a count it has not met in
# training is answered as one it has. Its events read the observation itself (the encoder "flat"): on
# a learned encoder's features they flipped as the features moved. No LSTM: the critic, an MLP, reads
# the observation and the counts.
VALUE_COUNT = Wiring(
    encoder="flat",
    counter="value-count",
    counter_inputs=("encoder",),
    counter_size=16,
    actor_inputs=("encoder", "count"),
    critic_inputs=("encoder", "count"),
    critic_hidden=128,
    count_as_action=True,
)

# An exact count of every value the observation shows, and of 16 learned events, and a policy that
# lets the observation choose which count answers (`count_mixture`): a mixture over the head's own
# policy and each count read as an answer. Nothing to decide slot by slot before an answer is right:
# the reward raises the weight of each count that proposed it. The head reads the observation only
# (over counts that grow to hundreds, a linear head went deterministic); the critic, an MLP, reads
# the observation and the counts.
COUNT_MIXTURE = replace(
    VALUE_COUNT,
    encoder="flat-exact",
    counter="feature-counts",
    actor_inputs=("encoder",),
    count_as_action=False,
    count_mixture=True,
)

# The learner every result in RESULTS on the timing tasks was measured with: the paper's A3C, one
# gradient step per batch on V-trace targets, no advantage or return normalisation, 64 envs per actor
# (the defaults of `train` before it learned other envs). Every agent here trains the timing tasks
# with it, so those results stay reproducible; on any other env the agents train with train's
# defaults (PPO).
A3C_TRAINING = {
    "envs_per_actor": 64,
    "algo": "a3c",
    "value_targets": "vtrace",
    "advantage_norm": False,
    "return_norm": False,
    "learning_rate": 7e-4,
    "max_grad_norm": 40.0,
    "separate_critic": "off",
}

# The options of signed-count's measured runs (RESULTS): the gated regulariser and the units' faster
# Adam group that brought its count weights to exactly +-1, over a fixed 6M-step budget.
SIGNED_COUNT_TRAINING = {
    **A3C_TRAINING,
    "regularizer_gate_success": 0.5,
    "regularizer_start_steps": 0,
    "regularizer_end_steps": 1_000_000,
    "unit_lr_scale": 10.0,
    "total_steps": 6_000_000,
    "target_fraction": 2.0,
}

# learned-count's: signed-count's with the regulariser entering at a training success of 0.25 instead
# of 0.5. Its regulariser includes the pull of the count's increments towards multiples of 1/2
# (`EventCounterCore`), which must act before the policy settles on a count whose up and down steps
# differ (IntervalTiming: light +0.44, dark -0.56 a step; journal 2026-12-05, v9 to v13).
# Its IntervalTiming policy was still improving at 6M steps and lost most of the episodes it lost to
# the spread of its sampled action (greedy, the shipped one won every episode), hence a budget of 10M
# and an entropy bonus that falls to 0 over it (journal 2026-12-05, v14 and v15). With the bonus near
# 0 a run can collapse and not recover (v15, seed 0, at 7.2M), so its results are those of best.pt,
# the checkpoint at the run's best recent training success.
LEARNED_COUNT_TRAINING = {
    **SIGNED_COUNT_TRAINING,
    "regularizer_gate_success": 0.25,
    "total_steps": 10_000_000,
    "entropy_coef_final": 0.0,
}

# taught-count's: the regulariser enters once the teacher's success reaches 0.9 and stays, the handover
# starts at its full weight and ramps over 1M steps as the student earns it; each part's gradient is
# clipped at norm 1 on its own (the count's is 100-1000 times the rest's); the entropy bonus stays at
# its start; 10M steps, no stop at the target.
TAUGHT_COUNT_TRAINING = {
    **LEARNED_COUNT_TRAINING,
    "entropy_coef_final": None,
    "max_grad_norm": 1.0,
    "grad_clip_by_part": True,
    "regularizer_gate_success": 0.9,
    "regularizer_start_steps": 500_000,
    "regularizer_end_steps": 1_500_000,
    "handover_steps": 1_000_000,
    "handover_earned": 0.9,
}

_AGENTS = (
    ("lstm", LSTM, "The paper's A3C baseline: LSTM(128) on [encoder, stimulus]; linear heads on h.", None),
    (
        "nac",
        NAC,
        "The LSTM serves the critic, a NAC accumulator m_t = m_{t-1} + NAC([stimulus, 1]) "
        "(8 units) the actor: MLP(128) on [normalised encoder, m]; the best measured nac wiring.",
        None,
    ),
    (
        "lru",
        replace(NAC, counter="linear-recurrence"),
        "The nac wiring with a diagonal linear "
        "recurrence (LRU, Orvieto et al. 2023) for the NAC accumulator: the strongest non-arithmetic "
        "baseline.",
        None,
    ),
    (
        "gru",
        replace(LSTM, memory_core="gru"),
        "The lstm agent with a GRU(128) in its memory slot: same inputs, heads and training defaults.",
        None,
    ),
    (
        "lstm-norm",
        replace(LSTM, feature_norm=True),
        "The lstm baseline with its encoder features layer-normalised before the LSTM reads them.",
        None,
    ),
    (
        "nalu",
        replace(NAC, unit="nalu"),
        "The nac wiring with a NALU (gated add / multiply, tied weights) as the counter's unit.",
        None,
    ),
    (
        "nau",
        replace(NAC, unit="nau"),
        "The nac wiring with a NAU (Madsen & Johansen; weights in [-1, 1], sparsity regulariser).",
        None,
    ),
    (
        "nac-ff",
        NAC_FF,
        "No LSTM: a NAC accumulator on [stimulus, 1] and MLP(128) heads on [encoder, m]; "
        "how far a pure counter extrapolates.",
        None,
    ),
    (
        "nac-paper",
        NAC_PAPER,
        "The paper-literal NAC agent: LSTM(128) and beside it a recurrent NAC "
        "n_t = NAC([h_t, stimulus, n_{t-1}]) (8 units); both heads linear on [h, n].",
        None,
    ),
    (
        "nac-paper-bias",
        replace(NAC_PAPER, counter_inputs=_STIMULUS_AND_BIAS),
        "As nac-paper, the "
        "recurrent NAC reading only time-invariant inputs: n_t = NAC([stimulus, 1, n_{t-1}]).",
        None,
    ),
    (
        "nac-critic-lstm",
        NAC_CRITIC_LSTM,
        "The LSTM serves the critic only; the actor times the delay "
        "with a NAC accumulator (nac without the normalisation).",
        None,
    ),
    (
        "nac-beside-lstm",
        NAC_BESIDE_LSTM,
        "LSTM(128) beside a NAC accumulator on [stimulus, 1]; both heads MLP(128) on [h, m].",
        None,
    ),
    (
        "nac-beside-blind-lstm",
        replace(NAC_BESIDE_LSTM, memory_inputs=("encoder",)),
        "As nac-beside-lstm, with the stimulus hidden from the LSTM.",
        None,
    ),
    (
        "nac-lstm-feeds",
        NAC_LSTM_FEEDS,
        "The LSTM feeds the accumulator: m_t = m_{t-1} + NAC([h_t, "
        "stimulus, 1]); both heads MLP(128) on [encoder, m] only.",
        None,
    ),
    (
        "nac-lstm-reads",
        replace(NAC_CRITIC_LSTM, memory_inputs=("encoder", "stimulus", "count")),
        "The accumulator feeds the LSTM (which reads [encoder, stimulus, m_t]); actor as nac-critic-lstm.",
        None,
    ),
    (
        "nac-recurrent-ff",
        replace(NAC_FF, counter="recurrent"),
        "No LSTM: a learned linear recurrence "
        "n_t = NAC([stimulus, 1, n_{t-1}]), which can decay, and MLP(128) heads on [encoder, n].",
        None,
    ),
    (
        "nac-scalar-count",
        NAC_SCALAR_COUNT,
        "The nac-critic-lstm wiring with a one-unit accumulator: the count is a single number.",
        None,
    ),
    (
        "nau-scalar-count",
        NAU_SCALAR_COUNT,
        "nac-scalar-count with a NAU: its regulariser pulls the single count to exactly +-(T - t) + c.",
        None,
    ),
    (
        "nau-saturated-count",
        NAU_SATURATED_COUNT,
        "nau-scalar-count whose actor reads the count saturated, clamp(m, -10, 10); the critic reads m.",
        None,
    ),
    (
        "signed-count",
        SIGNED_COUNT,
        "nau-saturated-count with a signed NAU: its regulariser pulls both "
        "count weights to -1 or +1, never to 0.",
        SIGNED_COUNT_TRAINING,
    ),
    (
        "learned-count",
        LEARNED_COUNT,
        "A NAU count of learned binary events and their complements (straight-through gates on the "
        "observation and a few phase bits) plus the raw stimulus; the actor reads it clamped, with "
        "the events. The default agent.",
        LEARNED_COUNT_TRAINING,
    ),
    (
        "taught-count",
        TAUGHT_COUNT,
        "learned-count taught by a head on the LSTM: the count's phase toggles where the observation "
        "changes and it counts in whole steps; its head imitates the teacher and is handed the policy "
        "by episodes as it keeps up.",
        TAUGHT_COUNT_TRAINING,
    ),
    (
        "nau-ff",
        replace(NAC_FF, unit="nau"),
        "nac-ff with a NAU: its regulariser pulls the increments to exactly -1, 0 or +1.",
        None,
    ),
    (
        "value-count",
        VALUE_COUNT,
        "Counts per learned value (POPGym's Count Recall): 16 exact counts of one-hot learned events "
        "on the raw observation, the count it asks for read through snapped gates, and an actor whose "
        "logit of answer j falls with |count - j|; no LSTM.",
        None,
    ),
    (
        "count-mixture",
        COUNT_MIXTURE,
        "Exact counts of every value of the raw observation and of 16 learned events; the policy is "
        "a mixture, chosen by the observation, over its head's own and each count read as an answer "
        "(logit of answer j falling with |count - j|); no LSTM.",
        None,
    ),
)

for _name, _wiring, _summary, _training in _AGENTS:
    register_agent(_name, _wiring, _summary, training_defaults=_training or A3C_TRAINING)

# The names of the project's own agents (the registry also holds those a user's module registers).
CATALOG_AGENT_NAMES = tuple(_name for _name, *_ in _AGENTS)
