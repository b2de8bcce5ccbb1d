"""The scorecard's figure: a heat map of the extrapolation score (agents x tasks), and one panel per
task of the fraction of the ceiling against T (log scale), mean over seeds with its 95% t-interval."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.bench.protocol import HOLD_FRACTION, Protocol
from nalu_rl.bench.scorecard import ScoreRow, SeedResult
from nalu_rl.figures import save_figure, set_delay_axis
from nalu_rl.stats import t_interval

SCORECARD_FIGURE = "scorecard.png"


def _curve(
    seeds: Sequence[SeedResult], delays: Sequence[int]
) -> tuple[list[float], list[float], list[float]]:
    means, lows, highs = [], [], []
    for delay in delays:
        values = [seed.fraction_by_delay.get(delay, 0.0) for seed in seeds]
        if len(values) >= 2:
            mean, low, high = t_interval(values)
        else:
            mean = low = high = values[0]
        means.append(mean)
        lows.append(max(0.0, low))
        highs.append(min(1.0, high))
    return means, lows, highs


def plot_scorecard(
    rows: Sequence[ScoreRow], seed_results: Sequence[SeedResult], protocol: Protocol, out_path: str | Path
) -> Path:
    """Draw the heat map and the per-task panels into one image at `out_path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    tasks = sorted({row.task for row in rows})
    agents = sorted({row.agent for row in rows})
    panels = len(tasks)
    columns = min(4, panels)
    panel_rows = math.ceil(panels / columns)
    figure = plt.figure(figsize=(4.2 * columns, 3.2 * (panel_rows + 1) + 0.6), dpi=110)
    grid = figure.add_gridspec(panel_rows + 1, columns)

    heat = figure.add_subplot(grid[0, :])
    score = {(row.agent, row.task): row for row in rows}
    values = [
        [score[(agent, task)].score[0] if (agent, task) in score else math.nan for task in tasks]
        for agent in agents
    ]
    image = heat.imshow(values, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    heat.set_xticks(range(len(tasks)), tasks, fontsize=8)
    heat.set_yticks(range(len(agents)), agents, fontsize=8)
    for i, agent in enumerate(agents):
        for j, task in enumerate(tasks):
            row = score.get((agent, task))
            if row is not None:
                color = "black" if row.score[0] > 0.6 else "white"
                text = f"{row.score[0]:.2f}\n({row.seeds} seed{'s' if row.seeds != 1 else ''})"
                heat.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
    far = ", ".join(str(delay) for delay in protocol.far_delays)
    heat.set_title(f"extrapolation score: mean success / ceiling at T = {far}", fontsize=9)
    figure.colorbar(image, ax=heat, fraction=0.02)

    by_task: dict[str, dict[str, list[SeedResult]]] = defaultdict(lambda: defaultdict(list))
    for result in seed_results:
        by_task[result.task][result.agent].append(result)
    delays = list(protocol.delays)
    low, high = protocol.training_delays[0], protocol.training_delays[-1]
    colors = {agent: f"C{number % 10}" for number, agent in enumerate(agents)}  # one per agent, every panel
    for index, task in enumerate(tasks):
        axes = figure.add_subplot(grid[1 + index // columns, index % columns])
        axes.axvspan(low - 0.5, high + 0.5, color="0.88", zorder=0)
        axes.axhline(HOLD_FRACTION, color="0.5", linestyle=":", linewidth=1)
        for agent in agents:
            seeds = by_task[task].get(agent)
            if not seeds:
                continue
            means, lows, highs = _curve(seeds, delays)
            color = colors[agent]
            axes.plot(delays, means, marker="o", markersize=2.5, linewidth=1.3, color=color)
            axes.fill_between(delays, lows, highs, color=color, alpha=0.2, linewidth=0)
        set_delay_axis(axes, delays, log_x=True)
        axes.set_ylim(-0.02, 1.02)
        axes.set_title(task, fontsize=9)
        axes.set_xlabel("T", fontsize=8)
        axes.set_ylabel("success / ceiling", fontsize=8)
        axes.tick_params(labelsize=7)
        axes.grid(alpha=0.3)
        if index == 0:  # every agent of the figure, whether or not this task has its runs
            handles = [Line2D([], [], color=color, marker="o", markersize=2.5) for color in colors.values()]
            axes.legend(handles, list(colors), fontsize=6, loc="lower left")
    return save_figure(figure, out_path)
