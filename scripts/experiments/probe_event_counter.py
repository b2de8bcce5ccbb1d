"""Makes docs/RESULTS.md, "`learned-count` on a task without a stimulus: what it counts".

What an event counter (learned-count's core) has learned to count: per episode segment (the steps
between one cue and the next; on TimeTrack and IntervalTiming, between changes of the stimulus), how
often each event bit is on and which phase the bits hold; whether the phase changes on a cue (a
latch) or elsewhere; the count's effective weights; the outcomes and where the episodes that failed
ended against the due time.

    python scripts/experiments/probe_event_counter.py runs/bench/grid/trials/.../best.pt --delays 5 8 12
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import gymnasium
import numpy as np
import torch

from nalu_rl.agents.event_counter import EventCounterCore
from nalu_rl.checkpoint import load_agent
from nalu_rl.environment import observation_dict
from nalu_rl.errors import InputError
from nalu_rl.evaluation import ModelPolicy, delay_seeds, episode_outcomes, timing_environment


def play(model: torch.nn.Module, config: dict, delay: int, episodes: int, seed: int) -> list[dict]:
    """`episodes` episodes at `delay`: per episode the cue flags, event bits, phase bits and count
    at each step (the state the action at that step was chosen from), the outcome and the end step."""
    with timing_environment(config) as environment:
        env = environment.make_vector(episodes, delay_range=(delay, delay))
        due = environment.due_time(delay)
    env_seed, action_seed = delay_seeds(seed, delay)
    policy = ModelPolicy(model.eval(), episodes, group_seeds=[action_seed])
    observation = observation_dict(env.reset(seed=env_seed)[0])
    start = np.ones(episodes, dtype=bool)
    running = np.ones(episodes, dtype=bool)
    records = [
        {"cues": [], "events": [], "phase": [], "count": [], "outcome": "", "end": None}
        for _ in range(episodes)
    ]
    t = 0
    while running.any() and t < 4 * due + 50:
        actions = policy(observation, start)
        start[:] = False
        views = model.describe_state(policy.state)
        for row in np.flatnonzero(running):
            record = records[row]
            record["cues"].append(cue_flags(observation, row, t, records[row]))
            record["events"].append(views["event_bits"][row].numpy().copy())
            record["phase"].append(views["event_phase"][row].numpy().copy())
            record["count"].append(float(views["event_count"][row, 0]))
        observation, _, terminated, truncated, info = env.step(actions)
        observation = observation_dict(observation)
        ended = running & (np.asarray(terminated) | np.asarray(truncated))
        for row in np.flatnonzero(ended):
            records[row]["outcome"] = str(episode_outcomes(info, ended)[row])
            records[row]["end"] = t
        running &= ~ended
        t += 1
    env.close()
    for record in records:
        record["due"] = due
        for key in ("cues", "events", "phase"):
            record[key] = np.array(record[key])
    return records


def cue_flags(observation: dict, row: int, t: int, record: dict) -> np.ndarray:
    """The cue flags of one env's observation: a cue task's `cues` entry; on a task with a `stimulus`
    entry instead (TimeTrack, IntervalTiming), one flag that marks each step whose stimulus differs
    from the step before's (the first step where it is not zero)."""
    if "cues" in observation:
        return observation["cues"][row].astype(np.float32).copy()
    if "stimulus" not in observation:
        raise InputError("the task's observation has neither a 'cues' nor a 'stimulus' entry")
    stimulus = np.asarray(observation["stimulus"][row], dtype=np.float64).ravel()
    before = record.setdefault("_stimulus", np.zeros_like(stimulus))
    record["_stimulus"] = stimulus
    return np.float32([t == 0 and stimulus.any() or (t > 0 and (stimulus != before).any())])


def segment_of_each_step(cues: np.ndarray) -> np.ndarray:
    """Per step, how many cue steps came before it (0 before the first cue's step has passed)."""
    is_cue = cues.any(axis=1)
    return np.concatenate([[0], np.cumsum(is_cue)[:-1]])


def report(records: list[dict]) -> None:
    """Print the probe's tables for the episodes of one or more delays."""
    segments: dict[int, list[np.ndarray]] = {}
    phases: dict[int, Counter] = {}
    changes_on_cue = changes_elsewhere = 0
    latched = 0
    for record in records:
        segment = segment_of_each_step(record["cues"])
        for index in np.unique(segment):
            rows = segment == index
            segments.setdefault(int(index), []).append(record["events"][rows])
            phases.setdefault(int(index), Counter()).update(
                "".join(str(int(bit)) for bit in bits) for bits in record["phase"][rows]
            )
        phase = record["phase"]
        changed = np.flatnonzero((phase[1:] != phase[:-1]).any(axis=1)) + 1
        # The state at step t has read the observation of step t, so a latch on a cue changes at it.
        cue_steps = set(np.flatnonzero(record["cues"].any(axis=1)))
        changes_on_cue += sum(int(step in cue_steps) for step in changed)
        changes_elsewhere += sum(int(step not in cue_steps) for step in changed)
        last_cue = max(cue_steps) if cue_steps else None
        if last_cue is not None and last_cue > 0 and (phase[last_cue] != phase[last_cue - 1]).any():
            latched += 1
    print("| segment (cues seen) | steps | event bits on (fraction, per bit) | phase bits (share of steps) |")
    print("|---|---|---|---|")
    for index in sorted(segments):
        events = np.concatenate(segments[index])
        total = sum(phases[index].values())
        shares = ", ".join(f"{bits} {count / total:.2f}" for bits, count in phases[index].most_common())
        on = " ".join(f"{value:.2f}" for value in events.mean(axis=0))
        print(f"| {index} | {len(events)} | {on} | {shares} |")
    print()
    print(
        f"phase changes on a cue step: {changes_on_cue}, elsewhere: {changes_elsewhere}; "
        f"episodes whose phase changes at the last cue: {latched} of {len(records)}"
    )
    outcomes = Counter(record["outcome"] or "running" for record in records)
    offsets = Counter(
        record["end"] - record["due"]
        for record in records
        if record["end"] is not None and record["outcome"] != "success"
    )
    print(
        f"outcomes: {dict(outcomes)}; end step - due step of the episodes that failed: "
        f"{dict(sorted(offsets.items()))}"
    )


def count_weights(model: torch.nn.Module) -> str:
    """The count unit's effective weights (on the stimulus if read, then events and complements)."""
    for module in model.modules():
        if isinstance(module, EventCounterCore):
            unit = module.counter_unit
            weight = unit.effective_weight() if hasattr(unit, "effective_weight") else unit.weight
            events = "events are the phase bits"
            if module.event_gate is not None:
                events = (
                    f"event gate bias {np.round(module.event_gate.linear.bias.detach().numpy(), 3).tolist()}"
                )
            return (
                f"count weights {np.round(weight.detach().numpy(), 3).tolist()}; {events}, "
                f"phase gate bias {np.round(module.phase_gate.linear.bias.detach().numpy(), 3).tolist()}"
            )
    raise InputError("the checkpoint's agent has no event counter")


def initial_spread(agent: str, env_id: str, seeds: int = 5) -> None:
    """How far a cue moves the gates of a freshly built `agent` on `env_id` (a cue task): per seed, the
    largest change of an event or phase gate's pre-activation between the blank frame and a frame
    with one cue, against the event gates' start bias."""
    import nalu_rl.envs  # noqa: F401  (registers the tasks)
    from nalu_rl.agents import make_agent

    space = gymnasium.make(env_id).observation_space
    width = space["cues"].shape[0]
    frames = torch.cat([torch.zeros(1, width), torch.eye(width)])
    print("| seed | largest change a cue makes in a gate's pre-activation | event gates' start bias |")
    print("|---|---|---|")
    for seed in range(seeds):
        torch.manual_seed(seed)
        model = make_agent(agent, space, 2)
        core = next(module for module in model.modules() if isinstance(module, EventCounterCore))
        with torch.no_grad():
            features = model.encoder(frames)
            if model.feature_norm is not None:
                features = model.feature_norm(features)
            width_x = core.sequence_input_width
            gates = core.gates
            change = max(
                (features @ gate.linear.weight[:, :width_x].T)[1:]
                .sub((features @ gate.linear.weight[:, :width_x].T)[:1])
                .abs()
                .max()
                .item()
                for gate in gates
            )
        print(f"| {seed} | {change:.3f} | {core.EVENT_BIAS} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument(
        "checkpoint", type=Path, nargs="?", help="a checkpoint of an agent with an event counter"
    )
    parser.add_argument(
        "--initial-spread", nargs=2, metavar=("AGENT", "ENV_ID"),
        help="instead: how far a cue moves the gates of AGENT freshly built for the cue task ENV_ID",
    )  # fmt: skip
    parser.add_argument("--delays", type=int, nargs="+", default=[5, 8, 12])
    parser.add_argument("--episodes", type=int, default=50, help="episodes per delay")
    parser.add_argument("--seed", type=int, default=100_000)
    args = parser.parse_args(argv)
    if args.initial_spread:
        try:
            initial_spread(*args.initial_spread)
        except (gymnasium.error.Error, KeyError, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
    if args.checkpoint is None:
        parser.error("a checkpoint (or --initial-spread AGENT ENV_ID) is needed")
    try:
        model, config = load_agent(args.checkpoint)
        print(f"{args.checkpoint}: {count_weights(model)}")
        with torch.no_grad():
            records = [
                record
                for delay in args.delays
                for record in play(model, config, delay, args.episodes, args.seed)
            ]
        report(records)
    except (InputError, OSError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
