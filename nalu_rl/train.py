"""`python -m nalu_rl.train`: train an agent (TimeTrack by default), checkpoint it, evaluate it.

The run folder gets config.json, checkpoint.pt, TensorBoard events, run_status.json (the run's state
for programs that watch it: nalu_rl.runtime.status) and, at the end, the evaluation CSV and figure.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from nalu_rl.cli import run_cli
from nalu_rl.config import parse_config
from nalu_rl.errors import InputError
from nalu_rl.runtime.run import TrainingRun
from nalu_rl.runtime.run_folder import open_run_folder
from nalu_rl.runtime.status import RunStatusFile
from nalu_rl.runtime.training import close_dashboard, train

# The clip of one evaluation episode added to TensorBoard at the end of a run.
CLIP_FPS = 4.0


def main(argv: Sequence[str] | None = None) -> int:
    """Train as the command line says, then evaluate; return the exit code."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if "--list-agents" in arguments:
        from nalu_rl.plugins import import_modules, modules_in_argv

        import_modules(modules_in_argv(arguments))
        print(agents_table())
        return 0
    run = run_training(arguments, keep_dashboard=True)
    try:
        if run.failure is not None:
            print(f"error: {run.failure}", file=sys.stderr)
            return 1
        if run.signal_received is None:
            evaluate(run)
    finally:
        close_dashboard(run)
    return 0


def run_training(argv: Sequence[str] | None = None, keep_dashboard: bool = False) -> TrainingRun:
    """Train as the command line says and return the finished run (no final evaluation). With
    `keep_dashboard` its TensorBoard writer stays open for more (close it with `close_dashboard`).

    The run folder's run_status.json follows the run (nalu_rl.runtime.status); a run refused after
    its folder is known (a --resume of a corrupt checkpoint) records its one-line error there too."""
    config, explicit_options = parse_config(argv)
    logdir: Path | None = None
    try:
        config, logdir, payload = open_run_folder(config, explicit_options)
        config.save_json(logdir / "config.json")
        run = TrainingRun(config, logdir, payload)
    except InputError as error:
        # This run's folder once opened, or the one --resume names; never another run's folder.
        refused = logdir or (Path(config.resume) if config.resume is not None else None)
        if refused is not None and refused.is_dir():
            RunStatusFile(refused, config.total_steps).refused(str(error))
        raise
    run = train(run)
    if not keep_dashboard:
        close_dashboard(run)
    return run


def evaluate(run: TrainingRun) -> None:
    """Evaluate the trained model across delays into the run folder, and add the success-vs-T
    figure and a clip of one evaluation episode to TensorBoard."""
    from nalu_rl.environment import env_metadata
    from nalu_rl.evaluation import evaluate_and_write, timing_environment
    from nalu_rl.playback import play_episodes_to_frames

    config = run.config
    if config.eval_episodes == 0:
        return
    if run.window.mean_ceiling is None:  # the run's env has no delays and ceilings
        print(f"no success-vs-T evaluation: {config.env_id} is not a timing task", file=sys.stderr)
        return
    run.model.eval()
    with timing_environment(config.to_dict()) as environment:  # its delays, not TimeTrack's
        max_delay, train_range = environment.max_delay, environment.delay_range
    csv_path = evaluate_and_write(
        run.model,
        config.to_dict(),
        run.logdir,
        delays=range(1, min(config.eval_max_delay, max_delay) + 1),
        episodes=config.eval_episodes,
        seed=config.seed,
        device=str(run.device),
    )
    print(f"evaluation written to {csv_path}", file=sys.stderr)
    if run.dashboard is None:
        return
    run.dashboard.log_image_file("evaluation/success_by_delay", csv_path.with_suffix(".png"), run.steps)
    if "rgb_array" not in env_metadata(config.env_id).get("render_modes", ()):
        return  # a timing task that draws no frames: no clip
    run.model.to("cpu")
    frames, _ = play_episodes_to_frames(
        run.model, config.to_dict(), episodes=1, delay=train_range[1], seed=config.seed, fps=CLIP_FPS
    )
    run.dashboard.log_clip("evaluation/episode", frames, run.steps, CLIP_FPS)


def agents_table() -> str:
    """A table of the agents: name, shipped checkpoints, one-line description."""
    from nalu_rl.agents import describe_agents
    from nalu_rl.checkpoint import shipped_checkpoints_of

    rows = []
    for name, description in describe_agents().items():
        checkpoints = shipped_checkpoints_of(name)
        rows.append((name, ", ".join(checkpoints) or "-", description))
    name_width = max(len(row[0]) for row in rows)
    shipped_width = max(len("shipped (--agent of evaluate/render)"), *(len(row[1]) for row in rows))
    lines = [
        f"{'agent':<{name_width}}  {'shipped (--agent of evaluate/render)':<{shipped_width}}  description"
    ]
    lines += [f"{name:<{name_width}}  {ships:<{shipped_width}}  {text}" for name, ships, text in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    run_cli(main)
