"""What a sweep will run, decided before any trial starts: the grid (agents x seeds), the train
options checked as `nalu_rl.train` would, the sweep folder, and the resources of one trial."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nalu_rl
from nalu_rl.cli import CliError, parse_ranges
from nalu_rl.config import Config, parse_config, validate
from nalu_rl.environment import TASK_OPTION_KWARGS, task_options
from nalu_rl.plugins import consented_imports, module_folders, modules_in_argv, recorded_modules
from nalu_rl.runtime.training import learner_threads
from nalu_rl.sweep.trial import TrialSpec, trial_folder_name

# Train options that the sweep sets for each trial; after "--" they are refused.
SWEEP_OWNED_OPTIONS = ("agent", "seed", "logdir", "resume", "obs")
SWEEP_FILE = "sweep.json"  # the sweep's grid and options, read back by --resume
# The env keyword argument that makes --obs an axis of the sweep (a timing task's observation mode).
OBSERVATION_MODE = TASK_OPTION_KWARGS["obs"]


@dataclass
class SweepPlan:
    """What a sweep will run, decided before Ray starts."""

    name: str
    folder: Path
    agents: list[str]
    seeds: list[int]
    obs: str | None  # None for an env without observation modes (not a timing task)
    train_options: list[str]
    config: Config  # the train config shared by the trials (of the first agent)

    @property
    def task(self) -> str:
        """What the trials' folders and the sweep's default name say of the task: the observation mode
        of a timing task, else the env id (e.g. "CartPole-v1")."""
        return task_label(self.config.env_id, self.obs)

    def write_sweep_file(self) -> None:
        """Create the sweep folder and record the grid in it, for --resume."""
        self.folder.mkdir(parents=True, exist_ok=True)
        grid = {
            "agents": self.agents,
            "seeds": self.seeds,
            "obs": self.obs,
            "train_options": self.train_options,
        }
        (self.folder / SWEEP_FILE).write_text(json.dumps(grid, indent=2) + "\n")


def parse_seeds(tokens: Sequence[str]) -> list[int]:
    """Seeds from tokens such as "0-4", "0,2,5" or "0-2,7" (several tokens add up); in order, no repeats."""
    seeds: list[int] = []
    for token in tokens:
        try:
            seeds.extend(seed for seed in parse_ranges(token) if seed not in seeds)
        except ValueError:
            raise CliError(f"--seeds: bad seed list {token!r}; expected e.g. 0-4, 0,2,5 or 0-2,7") from None
    if not seeds:
        raise CliError("--seeds: no seed given")
    return seeds


def check_train_options(
    train_options: Sequence[str], agents: Sequence[str], obs: str | None, on_cluster: bool
) -> Config:
    """Parse and validate the train options as `nalu_rl.train` would, for each agent, without training.

    Return the config of the first agent (the options shared by all trials). On a cluster the
    CUDA check is left to the trials, whose nodes may have the GPUs this one lacks. `obs` None: the
    env's default (an env without observation modes).
    """
    from nalu_rl.agents import agent_names
    from nalu_rl.plugins import import_modules, modules_in_argv

    import_modules(modules_in_argv(train_options))  # a user's agents are registered there
    unknown = [agent for agent in agents if agent not in agent_names()]
    if unknown:
        raise CliError(f"--agents: unknown agent {unknown[0]!r}; choose from {', '.join(agent_names())}")
    try:
        given = parse_config(train_options)[1]
    except ValueError as error:  # InputError and CliError among them
        raise CliError(f"train option rejected: {error}") from None
    # A trial gets its modules by name (--import); a recorded consent would let sweep.json grant it.
    for sweep_option in ("obs", "trust_imports"):
        if sweep_option in given:
            flag = "--" + sweep_option.replace("_", "-")
            raise CliError(f"{flag} is an option of the sweep: give it before --")
    owned = [name for name in SWEEP_OWNED_OPTIONS if name in given]
    if owned:
        flag = "--" + owned[0].replace("_", "-")
        raise CliError(f"{flag} is set by the sweep for each trial; remove it from the train options")
    configs = []
    for agent in agents:
        try:
            observation = ["--obs", obs] if obs is not None else []
            config, _ = parse_config(["--agent", agent, *observation, *train_options])
            if on_cluster and config.device == "cuda":
                validate(dataclasses.replace(config, device="auto"))
            else:
                validate(config)
        except ValueError as error:  # InputError and CliError among them
            raise CliError(f"train option rejected: {error}") from None
        configs.append(config)
    return configs[0]


def saved_grid(args: argparse.Namespace, grid_file: str = SWEEP_FILE, what: str = "sweep") -> dict[str, Any]:
    """The grid recorded in ROOT/NAME/`grid_file` of the `what` (a sweep, a benchmark run) that
    --resume continues ({} without --resume); CliError in one line when there is none to read."""
    if not args.resume:
        return {}
    if not args.name:
        raise CliError(f"--resume needs the --name of the {what} to continue")
    path = Path(args.root) / args.name / grid_file
    try:
        return json.loads(path.read_text())
    except OSError:
        raise CliError(f"no {what} to resume: {path} not found") from None
    except ValueError:
        raise CliError(f"cannot resume: {path} is not valid JSON") from None


def _check_limits(args: argparse.Namespace) -> None:
    for name, value, low in (
        ("--max-failures", args.max_failures, 0),
        ("--max-concurrent", args.max_concurrent, 1),
        ("--cpus-per-trial", args.cpus_per_trial, 1),
    ):
        if value is not None and value < low:
            raise CliError(f"{name} must be at least {low}, got {value}")
    if args.gpus_per_trial is not None and args.gpus_per_trial < 0:
        raise CliError(f"--gpus-per-trial must not be negative, got {args.gpus_per_trial}")


def plan_sweep(args: argparse.Namespace, train_options: list[str] | None) -> SweepPlan:
    """Check the command line (no Ray needed) and decide the grid; CliError on bad input.

    A new sweep's train options are its --import modules followed by the options after "--". With
    --resume, what is not given again comes from the sweep's sweep.json; the modules its train options
    name are imported only when named again with --import or accepted with --trust-imports.
    """
    saved = saved_grid(args)
    agents = args.agents or saved.get("agents")
    seed_tokens = args.seeds or [",".join(str(seed) for seed in saved.get("seeds", []))]
    if train_options is None and args.resume:
        train_options = saved.get("train_options", [])
        sweep_file = f"sweep file {Path(args.root) / args.name / SWEEP_FILE}"
        if not isinstance(train_options, list) or not all(isinstance(item, str) for item in train_options):
            raise CliError(f"cannot resume: the {sweep_file} has malformed train options")
        recorded = train_option_modules(train_options)
        consented_imports(recorded, args.imports, args.trust_imports, recorded_by=sweep_file)
    else:
        given = modules_in_argv(train_options or [])
        imports = [name for name in args.imports if name not in given]
        train_options = [
            *(option for name in imports for option in ("--import", name)),
            *(train_options or []),
        ]
    if not agents:
        raise CliError("--agents: give at least one agent")
    if not args.seeds and not saved:
        raise CliError("--seeds: give the seeds, e.g. 0-4")
    seeds = parse_seeds(seed_tokens)
    _check_limits(args)
    obs = args.obs or saved.get("obs")
    config = check_train_options(train_options, agents, obs, on_cluster=args.address is not None)
    if OBSERVATION_MODE not in task_options(config.env_id):
        if args.obs:
            raise CliError(f"--obs: {config.env_id} has no observation modes (it is not a timing task)")
        obs = None
    else:
        obs = obs or config.obs
    name = args.name or f"{task_label(config.env_id, obs)}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder = new_or_resumed_folder(args.root, name, args.resume, "sweep")
    return SweepPlan(name, folder, list(agents), seeds, obs, list(train_options), config)


def train_option_modules(train_options: Sequence[str]) -> list[str]:
    """The modules that train options would import: their --import modules, then the module of an
    --env-id written "module:Env-v0" (Gymnasium imports it)."""
    env_ids = [
        argument.split("=", 1)[1] if argument.startswith("--env-id=") else train_options[index + 1]
        for index, argument in enumerate(train_options)
        if argument.startswith("--env-id=") or (argument == "--env-id" and index + 1 < len(train_options))
    ]
    return recorded_modules(
        {"imports": modules_in_argv(train_options), "env_id": env_ids[-1] if env_ids else None}
    )


def task_label(env_id: str, obs: str | None) -> str:
    """A sweep's word for its task in folder names: the observation mode of an env that has them, else
    the env id with "/" and ":" as "-"."""
    return obs if obs is not None else env_id.replace("/", "-").replace(":", "-")


def trial_cpus(config: Config) -> int:
    """CPUs one trial uses: its actor (or hogwild worker) processes and the learner; one with
    `--runtime device` (one process, its envs on the learner's device)."""
    return 1 if config.runtime == "device" else config.actors + 1


def trial_resources(
    plan: SweepPlan, args: argparse.Namespace, largest_node: dict[str, float]
) -> tuple[int, float]:
    """CPUs and GPUs each trial asks for, fitted to the largest node; CliError for GPUs it lacks."""
    wanted = args.cpus_per_trial or trial_cpus(plan.config)
    cpus = max(1, min(wanted, int(largest_node["CPU"]) or 1))
    if args.cpus_per_trial and cpus < args.cpus_per_trial:
        print(
            f"note: --cpus-per-trial {args.cpus_per_trial} lowered to {cpus}, the cores of the largest node",
            file=sys.stderr,
        )
    if args.gpus_per_trial is not None:
        gpus = args.gpus_per_trial
    else:
        gpus = 1.0 if plan.config.device == "cuda" else 0.0
    if gpus > largest_node["GPU"]:
        raise CliError(
            f"each trial asks for {gpus:g} GPU, but the largest Ray node has {largest_node['GPU']:g}"
        )
    return cpus, gpus


def source_checkout() -> str:
    """The project folder this nalu_rl was imported from when it is a source checkout, else ""."""
    root = Path(nalu_rl.__file__).resolve().parent.parent
    return str(root) if (root / "pyproject.toml").is_file() else ""


def trial_python_path(train_options: Sequence[str]) -> str:
    """The PYTHONPATH entries of every trial: this checkout (when nalu_rl runs from one), then the
    folders where the modules of the train options were found here (a trial runs in its own folder,
    from which `--import custom_core` of `cd examples` would not be found)."""
    folders = [source_checkout(), *module_folders(train_option_modules(train_options))]
    return os.pathsep.join(dict.fromkeys(folder for folder in folders if folder))


def make_specs(plan: SweepPlan, cpus: int) -> list[TrialSpec]:
    """One spec per agent x seed, in that order."""
    given = parse_config(plan.train_options)[1]
    threads = 0 if "learner_threads" in given else learner_threads(plan.config, cores=cpus)
    python_path = trial_python_path(plan.train_options)
    return [
        TrialSpec(
            agent,
            seed,
            plan.obs,
            str(plan.folder / trial_folder_name(agent, plan.task, seed)),
            tuple(plan.train_options),
            threads,
            python_path,
        )
        for agent in plan.agents
        for seed in plan.seeds
    ]


def new_or_resumed_folder(root: str, name: str, resume: bool, kind: str) -> Path:
    """The folder `root`/`name` of a sweep or benchmark (`kind`): `name` must be a plain folder name,
    and a folder that holds files already is taken only by a --resume (CliError otherwise)."""
    if "/" in name or name in ("", ".", ".."):
        raise CliError(f"--name must be a plain folder name, got {name!r}")
    folder = Path(root).absolute() / name
    if not resume and folder.exists() and any(folder.iterdir()):
        raise CliError(f"{kind} folder {folder} already exists; continue it with --resume --name {name}")
    return folder
