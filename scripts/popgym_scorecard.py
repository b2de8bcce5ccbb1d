"""POPGym's scorecard: the MMER of each agent on each task over its seeds, with 95% t-intervals, as a
table and a figure, computed from per-run CSVs that `--collect` writes from training runs.

    python scripts/popgym_scorecard.py docs/data/popgym --collect runs/popgym   # runs -> CSVs -> table
    python scripts/popgym_scorecard.py docs/data/popgym                          # the committed CSVs

`--collect ROOT` finds every run folder below ROOT (a folder holding `config.json` and
`run_status.json`, as `nalu_rl.train` and the trials of `nalu_rl.sweep` leave them) whose env is a
POPGym task, and writes into DATA one curve per run, `<agent>-<task>-seed<k>.csv` (step, the recent
training return, the MMER so far, from its TensorBoard scalars; `<agent>` ends in "+separate-critic"
where the run's critic had a core of its own), and one row per run in `runs.csv`
(its final MMER and complete epochs from `run_status.json`, its steps and state). A run collected
again replaces its earlier row. The table (`scorecard.md`) and the figure (`scorecard.png`) are then
made from `runs.csv` alone. A run still in progress is scored by its MMER so far and marked so.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

from nalu_rl.checkpoint import load_checkpoint
from nalu_rl.stats import t_interval

RUNS_CSV = "runs.csv"
SEPARATE_CRITIC_MARK = "+separate-critic"
RUN_FIELDS = ["task", "agent", "seed", "steps", "total_steps", "state", "mmer", "complete_epochs"]
DIFFICULTIES = ("Easy", "Medium", "Hard")
CURVE_TAGS = {"charts/episode_return": "episode_return", "popgym/mmer": "mmer"}


def task_name(env_id: str) -> str | None:
    """ "CountRecallEasy" for "popgym-CountRecallEasy-v0"; None for an env that is not POPGym's."""
    if not env_id.startswith("popgym-"):
        return None
    return env_id.removeprefix("popgym-").rsplit("-v", 1)[0]


def task_order(task: str) -> tuple[str, int]:
    """Tasks by name, then Easy, Medium, Hard."""
    for index, difficulty in enumerate(DIFFICULTIES):
        if task.endswith(difficulty):
            return task.removesuffix(difficulty), index
    return task, len(DIFFICULTIES)


def run_folders(root: Path) -> list[Path]:
    """Every folder below (or at) `root` that holds a run's config.json and run_status.json."""
    return sorted(
        path.parent for path in root.rglob("run_status.json") if (path.parent / "config.json").exists()
    )


def write_curve(folder: Path, out_path: Path) -> int:
    """The run's recent return and MMER by step, from its TensorBoard scalars; the rows written."""
    from nalu_rl.run_scalars import read_rows

    rows = {
        step: {CURVE_TAGS[tag]: value for tag, value in row.items()}
        for step, row in read_rows(folder, list(CURVE_TAGS)).items()
    }
    with out_path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["step", *CURVE_TAGS.values()])
        for step in sorted(rows):
            writer.writerow(
                [step, *(f"{rows[step].get(column, float('nan')):.6g}" for column in CURVE_TAGS.values())]
            )
    return len(rows)


def run_label(folder: Path, config: dict) -> str:
    """The run's agent, as `<agent>+separate-critic` where its checkpoint's wiring gave the critic an
    encoder and a core of its own (train's `--separate-critic`), so that runs of one agent name with
    either critic are scored apart."""
    wiring = {}
    if (folder / "checkpoint.pt").is_file():
        wiring = load_checkpoint(folder).get("wiring") or {}
    return f"{config['agent']}{SEPARATE_CRITIC_MARK if wiring.get('critic_separate') else ''}"


def collect(roots: list[Path], data: Path) -> int:
    """Write the curve and the runs.csv row of every POPGym run below `roots`; the runs collected."""
    data.mkdir(parents=True, exist_ok=True)
    table = {(row["task"], row["agent"], row["seed"]): row for row in read_runs(data)}
    collected = 0
    for root in roots:
        for folder in run_folders(root):
            config = json.loads((folder / "config.json").read_text())
            status = json.loads((folder / "run_status.json").read_text())
            task = task_name(str(config.get("env_id") or ""))
            mmer = status.get("mmer") or {}
            if task is None or mmer.get("value") is None:
                continue
            agent, seed = run_label(folder, config), str(config["seed"])
            write_curve(folder, data / f"{agent}-{task}-seed{seed}.csv")
            table[(task, agent, seed)] = {
                "task": task,
                "agent": agent,
                "seed": seed,
                "steps": status["steps"],
                "total_steps": status["total_steps"],
                "state": status["state"],
                "mmer": f"{mmer['value']:.6g}",
                "complete_epochs": mmer["complete_epochs"],
            }
            collected += 1
    with (data / RUNS_CSV).open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=RUN_FIELDS)
        writer.writeheader()
        for key in sorted(table, key=lambda key: (key[0], key[1], int(key[2]))):
            writer.writerow(table[key])
    return collected


def read_runs(data: Path) -> list[dict[str, str]]:
    path = data / RUNS_CSV
    if not path.exists():
        return []
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def first_step_at(curve: Path, threshold: float = 0.9) -> int | None:
    """The first logged step at which the run's MMER so far is >= `threshold` (None: never, or no curve)."""
    if not curve.exists():
        return None
    with curve.open(newline="") as file:
        for row in csv.DictReader(file):
            if float(row["mmer"]) >= threshold:
                return int(row["step"])
    return None


def score(runs: list[dict[str, str]], data: Path) -> list[dict]:
    """Per task and agent: the seeds' MMERs, their mean and 95% t-interval (None with one seed), and
    the first step of each seed's curve at an MMER >= 0.9."""
    groups: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for run in runs:
        groups[(run["task"], run["agent"])].append(run)
    rows = []
    for (task, agent), members in sorted(
        groups.items(), key=lambda item: (task_order(item[0][0]), item[0][1])
    ):
        members.sort(key=lambda run: int(run["seed"]))
        values = [float(run["mmer"]) for run in members]
        interval = t_interval(values) if len(values) >= 2 else None
        unfinished = [run for run in members if int(run["steps"]) < int(run["total_steps"])]
        rows.append({
            "task": task, "agent": agent, "values": values, "interval": interval,
            "steps": [int(run["steps"]) for run in members], "unfinished": len(unfinished),
            "first_at": [
                first_step_at(data / f"{agent}-{task}-seed{run['seed']}.csv") for run in members
            ],
        })  # fmt: skip
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [
        "| task | agent | seeds | MMER, mean [95% interval] | per seed | steps per run | at >= 0.9 "
        "| first step at >= 0.9, per seed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        values = row["values"]
        mean = sum(values) / len(values)
        summary = (
            f"{mean:.3f}" if row["interval"] is None else "{:.3f} [{:.3f}, {:.3f}]".format(*row["interval"])
        )
        steps = (
            f"{min(row['steps']):,}"
            if min(row["steps"]) == max(row["steps"])
            else f"{min(row['steps']):,}-{max(row['steps']):,}"
        )
        if row["unfinished"]:
            steps += f" ({row['unfinished']} unfinished)"
        per_seed = ", ".join(f"{value:.3f}" for value in values)
        reached = sum(value >= 0.9 for value in values)
        cells = [
            row["task"],
            row["agent"],
            str(len(values)),
            summary,
            per_seed,
            steps,
            f"{reached} of {len(values)}",
            ", ".join("-" if step is None else f"{step:,}" for step in row["first_at"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], out_path: Path) -> None:
    """One group of bars per task, a bar per agent at its mean MMER with its interval, a dot per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nalu_rl.figures import save_figure

    tasks = sorted({row["task"] for row in rows}, key=task_order)
    agents = sorted({row["agent"] for row in rows})
    width = 0.8 / len(agents)
    figure, axes = plt.subplots(figsize=(max(5.0, 1.6 * len(tasks) * max(1, len(agents) / 2)), 3.8), dpi=110)
    for index, agent in enumerate(agents):
        for row in (row for row in rows if row["agent"] == agent):
            x = tasks.index(row["task"]) - 0.4 + width * (index + 0.5)
            mean = sum(row["values"]) / len(row["values"])
            error = (
                None
                if row["interval"] is None
                else [[mean - row["interval"][1]], [row["interval"][2] - mean]]
            )
            first_bar = row["task"] == min(other["task"] for other in rows if other["agent"] == agent)
            label = agent if first_bar else None
            axes.bar(x, mean + 1.0, width * 0.9, bottom=-1.0, color=f"C{index}", alpha=0.6, label=label)
            if error is not None:
                axes.errorbar(x, mean, yerr=error, color="black", capsize=3, linewidth=1)
            axes.scatter([x] * len(row["values"]), row["values"], color="black", s=8, zorder=3)
    axes.set_xticks(range(len(tasks)), tasks, fontsize=8)
    axes.set_ylim(-1.0, 1.0)
    axes.axhline(0.9, color="grey", linestyle="--", linewidth=0.8)
    axes.set_ylabel("MMER (bars: mean, 95% interval; dots: seeds)")
    axes.set_title("POPGym: max-mean episodic return per agent and task", fontsize=10)
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=max(1, len(agents)))
    save_figure(figure, out_path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "data", type=Path, help="folder of the per-run CSVs and runs.csv (written by --collect)"
    )
    parser.add_argument(
        "--collect",
        type=Path,
        nargs="+",
        metavar="ROOT",
        help="run folders, or folders below which to find them",
    )
    arguments = parser.parse_args(argv)
    if arguments.collect:
        missing = [root for root in arguments.collect if not root.is_dir()]
        if missing:
            parser.error(f"no such folder: {missing[0]}")
        print(f"{collect(arguments.collect, arguments.data)} POPGym runs collected into {arguments.data}")
    runs = read_runs(arguments.data)
    if not runs:
        parser.error(f"{arguments.data / RUNS_CSV} holds no runs (collect some with --collect ROOT)")
    rows = score(runs, arguments.data)
    table = markdown(rows)
    (arguments.data / "scorecard.md").write_text(table)
    plot(rows, arguments.data / "scorecard.png")
    print(table, end="")
    print(f"written: {arguments.data / 'scorecard.md'}, {arguments.data / 'scorecard.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
