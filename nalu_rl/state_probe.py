"""Did the agent learn a counter? Its recurrent state recorded step by step, and the counter view
(drawn by `python -m nalu_rl.counter`).

Plays episodes at several delays T and records the agent's recurrent state at every step
(`model.describe_state`: the NAC / NAU accumulator and the LSTM's hidden state). The figure has
one column per state view:
- top: the unit most correlated with elapsed time t, against t, one line per T (mean over
  episodes), a dot where t = T. A counter draws straight lines that keep their slope beyond
  the training range.
- bottom: a linear readout of the remaining steps T - t, fitted by least squares on the
  training-range delays only, against the true remaining steps. A state that counts keeps the
  readout on the diagonal for delays it never trained on; one that merely times the training
  range bends away.
An accumulator fed only time-invariant inputs (stimulus, bias) is linear in T and t by
construction, so its readout is exact whether or not the policy relies on it; whether the
policy reads the count is what the success-by-delay curve of `nalu_rl.evaluate` shows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nalu_rl.environment import observation_dict
from nalu_rl.evaluation import ModelPolicy, delay_seeds, episode_outcomes, timing_environment
from nalu_rl.figures import save_figure

# The LSTM cell state mirrors its hidden state; plotting both adds a column and no insight.
HIDDEN_VIEWS = ("lstm_c",)


@dataclass
class StateTrace:
    """The recurrent state of one episode, step by step: views[name] is [steps, width].

    `due` is the step at which arrival was due (T on TimeTrack, 2T on IntervalTiming; T when not
    given), so the time left at step t is due - t.
    """

    delay: int
    views: dict[str, np.ndarray]
    outcome: str
    due: int | None = None

    def __post_init__(self) -> None:
        if self.due is None:
            self.due = self.delay

    def time_left(self) -> np.ndarray:
        """due - t at each recorded step t."""
        return self.due - np.arange(self.steps)

    @property
    def steps(self) -> int:
        """Number of recorded steps (t = 0 .. steps - 1)."""
        return next(iter(self.views.values())).shape[0]


def record_state_traces(
    model: torch.nn.Module,
    config: dict[str, Any],
    delays: Sequence[int],
    episodes: int = 4,
    seed: int = 0,
    greedy: bool = False,
) -> list[StateTrace]:
    """Play `episodes` episodes at each delay and record the state the policy acted from at each t."""
    delays = list(delays)
    with timing_environment(config) as environment:
        vector_envs = [environment.make_vector(episodes, delay_range=(delay, delay)) for delay in delays]
        due_times = {delay: environment.due_time(delay) for delay in delays}
    env_seeds, action_seeds = zip(*(delay_seeds(seed, delay) for delay in delays), strict=True)
    batch_size = episodes * len(delays)
    policy = ModelPolicy(
        model.eval(),
        batch_size,
        greedy=greedy,
        group_sizes=[episodes] * len(delays),
        group_seeds=action_seeds,
    )
    observations = [
        observation_dict(env.reset(seed=env_seed)[0])
        for env, env_seed in zip(vector_envs, env_seeds, strict=True)
    ]
    running = np.ones(batch_size, dtype=bool)
    outcomes = np.full(batch_size, "", dtype=object)
    recorded: list[dict[str, np.ndarray]] = []
    episode_start = np.ones(batch_size, dtype=bool)
    try:
        while running.any():
            batch = {key: np.concatenate([obs[key] for obs in observations]) for key in observations[0]}
            actions = policy(batch, episode_start)
            episode_start = np.zeros(batch_size, dtype=bool)
            views = model.describe_state(policy.state)
            recorded.append({name: view.detach().cpu().numpy().copy() for name, view in views.items()})
            for k, env in enumerate(vector_envs):
                rows = slice(k * episodes, (k + 1) * episodes)
                observation, _, terminated, truncated, info = env.step(actions[rows])
                observations[k] = observation_dict(observation)
                ended = running[rows] & (np.asarray(terminated) | np.asarray(truncated))
                outcomes[rows][ended] = episode_outcomes(info, ended)[ended]
                running[rows] &= ~ended
            recorded[-1]["_running"] = running.copy()
    finally:
        for env in vector_envs:
            env.close()
    traces = []
    for row in range(batch_size):
        # A step is recorded for an episode up to and including the step on which it ended.
        last = next(step for step, record in enumerate(recorded) if not record["_running"][row])
        views = {
            name: np.stack([recorded[step][name][row] for step in range(last + 1)])
            for name in recorded[0]
            if name != "_running"
        }
        delay = delays[row // episodes]
        traces.append(StateTrace(delay, views, str(outcomes[row]), due=due_times[delay]))
    return traces


def most_time_correlated_unit(traces: Sequence[StateTrace], view: str) -> tuple[int, float]:
    """The unit of `view` whose value correlates most (in absolute value) with t, and that correlation."""
    values = np.concatenate([trace.views[view] for trace in traces])
    elapsed = np.concatenate([np.arange(trace.steps) for trace in traces]).astype(np.float64)
    centred = values - values.mean(0)
    elapsed = elapsed - elapsed.mean()
    spread = np.sqrt((centred**2).sum(0) * (elapsed**2).sum())
    correlation = np.divide(centred.T @ elapsed, spread, out=np.zeros(values.shape[1]), where=spread > 0)
    unit = int(np.argmax(np.abs(correlation)))
    return unit, float(correlation[unit])


def remaining_steps_readout(
    traces: Sequence[StateTrace], view: str, fit_delays: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares weights (with a bias last) reading the time left (T - t on TimeTrack) from `view`,
    fitted on delays in
    `fit_delays` only; returns (weights, per-trace predictions concatenated in trace order)."""

    def design(trace: StateTrace) -> np.ndarray:
        return np.concatenate([trace.views[view], np.ones((trace.steps, 1))], axis=1)

    fit = [trace for trace in traces if fit_delays[0] <= trace.delay <= fit_delays[1]]
    if not fit:
        raise ValueError(f"no episode with a delay in the fit range {fit_delays}")
    inputs = np.concatenate([design(trace) for trace in fit])
    targets = np.concatenate([trace.time_left() for trace in fit]).astype(np.float64)
    weights, *_ = np.linalg.lstsq(inputs, targets, rcond=None)
    predictions = np.concatenate([design(trace) @ weights for trace in traces])
    return weights, predictions


def plot_counter_view(
    traces: Sequence[StateTrace], out_path: str | os.PathLike, train_range: tuple[int, int], title: str = ""
) -> Path:
    """Draw the counter view of the recorded traces (see the module docstring) and save it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    views = [name for name in traces[0].views if name not in HIDDEN_VIEWS]
    delays = sorted({trace.delay for trace in traces})
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.9, len(delays)))
    colour_of = dict(zip(delays, colours, strict=True))
    figure, axes = plt.subplots(2, len(views), figsize=(5.2 * len(views), 8.4), dpi=110, squeeze=False)
    for column, view in enumerate(views):
        unit, correlation = most_time_correlated_unit(traces, view)
        top = axes[0, column]
        for delay in delays:
            runs = [trace.views[view][:, unit] for trace in traces if trace.delay == delay]
            length = max(len(run) for run in runs)
            # Mean over the episodes still running at each t.
            mean = np.array([np.mean([run[t] for run in runs if len(run) > t]) for t in range(length)])
            top.plot(np.arange(length), mean, color=colour_of[delay], linewidth=1.6, label=f"T = {delay}")
            if delay < length:
                top.plot([delay], [mean[delay]], "o", color=colour_of[delay], markersize=5)
        top.set_title(f"{view}: unit {unit} (corr with t = {correlation:+.2f})", fontsize=10)
        top.set_xlabel("t (steps since the stimulus)")
        top.set_ylabel(f"{view}[{unit}]")
        top.grid(alpha=0.3)
        top.legend(fontsize=7, ncol=2, title="dot: t = T", title_fontsize=7)

        bottom = axes[1, column]
        _, predictions = remaining_steps_readout(traces, view, train_range)
        offset = 0
        errors = {"in": [], "out": []}
        for trace in traces:
            remaining = trace.time_left()
            predicted = predictions[offset : offset + trace.steps]
            offset += trace.steps
            inside = train_range[0] <= trace.delay <= train_range[1]
            errors["in" if inside else "out"].append(np.abs(predicted - remaining))
            bottom.plot(remaining, predicted, color=colour_of[trace.delay], linewidth=0.8, alpha=0.7)
        top_remaining = max(trace.due for trace in traces)
        bottom.plot([0, top_remaining], [0, top_remaining], "k--", linewidth=1, label="exact count")
        # A readout that fails far out can shoot off by hundreds of steps; keep the scale readable.
        bottom.set_ylim(-0.25 * top_remaining, 1.5 * top_remaining)
        bottom.invert_xaxis()
        summary = ", ".join(
            f"{name} {np.concatenate(values).mean():.1f}" for name, values in errors.items() if values
        )
        bottom.set_title(
            f"linear readout of the time left from {view}\nmean abs error (steps): {summary}", fontsize=10
        )
        bottom.set_xlabel("true time left (steps until arrival is due)")
        bottom.set_ylabel("read-out remaining steps")
        bottom.grid(alpha=0.3)
        bottom.legend(fontsize=8, loc="upper left")
    figure.suptitle(
        title + f"\nreadouts fitted on T in {train_range[0]}..{train_range[1]} only; "
        "'in'/'out' = episodes inside/outside that range",
        fontsize=10,
    )
    return save_figure(figure, out_path)
