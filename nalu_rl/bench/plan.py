"""What a benchmark run will do, decided before Ray starts: its agents, tasks and seeds, each trial's
train options under the protocol, and the folders of its trials and of their per-seed CSVs.

A benchmark folder ROOT/NAME holds `bench.json` (the grid and the protocol, read back by --resume),
`trials/<agent>-<task>-seed<k>/` (ordinary run folders), `results/<task>/<agent>-seed<k>.csv` (the
per-seed evaluations) and the scorecard (`scorecard.csv`, `scorecard.md`, `scorecard.png`).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

from nalu_rl.bench.protocol import (
    BENCHMARK_TASKS,
    FULL_PROTOCOL,
    QUICK_PROTOCOL,
    Protocol,
    check_task,
    resolve_task,
    task_label,
)
from nalu_rl.bench.scorecard import seed_csv_path
from nalu_rl.cli import CliError
from nalu_rl.config import agent_training_defaults
from nalu_rl.environment import TASK_OPTION_KWARGS, task_options
from nalu_rl.sweep.plan import (
    check_train_options,
    new_or_resumed_folder,
    parse_seeds,
    saved_grid,
    trial_python_path,
)
from nalu_rl.sweep.trial import TrialSpec, trial_folder_name

BENCH_FILE = "bench.json"
DEFAULT_AGENTS = ("lstm", "gru", "nac", "signed-count", "learned-count")
SYMBOLIC = "symbolic"


@dataclass
class BenchPlan:
    """The grid of a benchmark run and where its files go."""

    name: str
    folder: Path
    agents: list[str]
    tasks: list[str]  # env ids
    seeds: list[int]
    protocol: Protocol
    imports: list[str]
    results_folder: Path | None = None  # --results; None: the benchmark folder's results/

    @property
    def results(self) -> Path:
        """The folder of the per-seed CSVs (the scorecard's input); a trial whose CSV is there is done."""
        return self.results_folder or self.folder / "results"

    def write_bench_file(self) -> None:
        """Create the benchmark folder (its trials/ too) and record the grid and protocol in it, for
        --resume."""
        (self.folder / "trials").mkdir(parents=True, exist_ok=True)
        grid = {
            "agents": self.agents,
            "tasks": self.tasks,
            "seeds": self.seeds,
            "protocol": self.protocol.to_dict(),
            "imports": self.imports,
            "results": str(self.results_folder) if self.results_folder else None,
        }
        (self.folder / BENCH_FILE).write_text(json.dumps(grid, indent=2) + "\n")


def trial_train_options(plan: BenchPlan, agent: str, env_id: str) -> list[str]:
    """The train options of one trial (before the agent, seed and folder the trial adds): the
    --import modules, the task, the protocol's step budget (the agent's own budget where smaller),
    and no final evaluation of train's own (the protocol's follows)."""
    own_budget = int(agent_training_defaults(agent).get("total_steps", plan.protocol.budget_steps))
    budget = min(own_budget, plan.protocol.budget_steps)
    imports = [option for name in plan.imports for option in ("--import", name)]
    return [*imports, "--env-id", env_id, "--total-steps", str(budget), "--eval-episodes", "0"]


def observation_mode(env_id: str) -> str | None:
    """The observation mode the protocol trains a task on: symbolic where it has modes, else none."""
    return SYMBOLIC if TASK_OPTION_KWARGS["obs"] in task_options(env_id) else None


def plan_bench(args: argparse.Namespace) -> BenchPlan:
    """Check the command line (no Ray, no training) and decide the grid; CliError in one line on bad
    input: an unknown agent or task, a task that is not a timing task, a bad seed list."""
    from nalu_rl.plugins import consented_imports, import_modules

    for name, value, low in (
        ("--max-failures", args.max_failures, 0),
        ("--max-concurrent", args.max_concurrent, 1),
    ):
        if value is not None and value < low:
            raise CliError(f"{name} must be at least {low}, got {value}")
    saved = saved_grid(args, BENCH_FILE, "benchmark run")
    if saved:
        recorded = [str(name) for name in saved.get("imports", [])]
        imports = consented_imports(recorded, args.imports, args.trust_imports, recorded_by=BENCH_FILE)
        protocol = Protocol.from_dict(saved["protocol"])
    else:
        imports = list(args.imports)
        protocol = QUICK_PROTOCOL if args.quick else FULL_PROTOCOL
    import_modules(imports)  # a user's agents and tasks are registered there
    agents = args.agents or saved.get("agents") or (["lstm"] if args.quick else list(DEFAULT_AGENTS))
    default_tasks = ["ReadySetGo", "TimeTrack"] if args.quick else list(BENCHMARK_TASKS)
    tasks = [resolve_task(name) for name in (args.tasks or saved.get("tasks") or default_tasks)]
    if args.seeds:
        seeds = parse_seeds(args.seeds)
    elif saved:
        seeds = parse_seeds([",".join(str(seed) for seed in saved.get("seeds", []))])
    else:
        seeds = [0] if args.quick else list(range(5))
    for env_id in dict.fromkeys(tasks):
        check_task(env_id, max(protocol.delays))
    labels = [task_label(env_id) for env_id in tasks]
    if len(set(labels)) != len(labels):
        raise CliError(f"--tasks: a task is named twice ({', '.join(labels)})")
    name = args.name or f"{'quick' if args.quick else 'bench'}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder = new_or_resumed_folder(args.root, name, args.resume, "benchmark")
    results = args.results or saved.get("results")
    plan = BenchPlan(
        name,
        folder,
        list(agents),
        tasks,
        seeds,
        protocol,
        imports,
        Path(results).absolute() if results else None,
    )
    for env_id in tasks:
        for agent in agents:
            check_train_options(
                trial_train_options(plan, agent, env_id),
                [agent],
                observation_mode(env_id),
                on_cluster=args.address is not None,
            )
    return plan


def make_trial_specs(plan: BenchPlan) -> list[TrialSpec]:
    """One spec per seed x agent x task, in that order (a run cut short has every agent and task at
    its first seeds); train sizes its learner's threads (the command fits them to the trial's CPUs)."""
    python_path = trial_python_path([option for name in plan.imports for option in ("--import", name)])
    return [
        TrialSpec(
            agent,
            seed,
            observation_mode(env_id),
            str(plan.folder / "trials" / trial_folder_name(agent, task_label(env_id), seed)),
            tuple(trial_train_options(plan, agent, env_id)),
            0,
            python_path,
        )
        for seed in plan.seeds
        for agent in plan.agents
        for env_id in plan.tasks
    ]


def result_csv(plan: BenchPlan, spec: TrialSpec) -> Path:
    """The per-seed CSV of a trial."""
    env_id = spec.train_options[spec.train_options.index("--env-id") + 1]
    return seed_csv_path(plan.results, task_label(env_id), spec.agent, spec.seed)
