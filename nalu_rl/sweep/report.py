"""The end of a sweep: how each trial ended, printed, and the finished trials' evaluations as one
success-by-delay figure and Markdown table in the sweep folder (nalu_rl.figures)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nalu_rl.sweep.folder import last_exit_description, read_trial_status
from nalu_rl.sweep.plan import SweepPlan
from nalu_rl.sweep.progress import SweepProgress
from nalu_rl.sweep.trial import TrialSpec


def write_figure(plan: SweepPlan, specs: Sequence[TrialSpec]) -> list[Path]:
    """The combined success-by-delay figure and Markdown table of the finished trials' evaluations."""
    from nalu_rl.evaluation import delay_meaning, training_range
    from nalu_rl.figures import curves_over_seeds, markdown_table, plot_success_by_delay, read_success_rows

    csvs = [Path(spec.folder) / "success_by_delay.csv" for spec in specs]
    csvs = [path for path in csvs if path.exists()]
    if not csvs:
        return []
    rows = read_success_rows(csvs)
    seeds = len(plan.seeds)
    figure = plot_success_by_delay(
        rows,
        plan.folder / "success_by_delay.png",
        train_range=training_range(plan.config.to_dict()),
        title=f"{plan.name}: {plan.task}, {seeds} seed{'s' if seeds != 1 else ''} per agent",
        delay_meaning=delay_meaning(plan.config.to_dict()),
    )
    table = plan.folder / "success_by_delay.md"
    table.write_text(markdown_table(curves_over_seeds(rows)))
    return [figure, table]


def summarize(plan: SweepPlan, specs: Sequence[TrialSpec], progress: SweepProgress, interrupted: bool) -> int:
    """Print how each trial ended, write the figure and table when all are done; return the exit code
    (0 all finished, 1 some failed, 130 interrupted or some not finished)."""
    finished, failed, unfinished = [], [], []
    for spec in specs:
        status = read_trial_status(spec.folder) or {}
        if status.get("status") == "finished":
            finished.append(spec)
        elif status.get("status") == "failed" or progress.state.get(spec.name) == "failed":
            reason = (
                status.get("error") or progress.errors.get(spec.name) or last_exit_description(spec.folder)
            )
            failed.append((spec, reason))
        else:
            unfinished.append(spec)
    print(
        f"sweep {plan.name}: {len(finished)} of {len(specs)} trials finished, {len(failed)} failed, "
        f"{len(unfinished)} not finished"
    )
    for spec, reason in failed:
        print(f"  failed: {spec.name}: {reason}")
    if unfinished:
        names = ", ".join(spec.name for spec in unfinished)
        print(f"  not finished: {names}; continue with --resume --name {plan.name}")
    if finished and not unfinished:
        written = write_figure(plan, finished)
        if written:
            print("wrote " + " and ".join(str(path) for path in written))
        else:
            print("no evaluation CSVs to plot (--eval-episodes 0?)")
    if interrupted or unfinished:
        return 130
    return 1 if failed else 0
