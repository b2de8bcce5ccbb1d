"""The timing benchmark: its tasks and protocol (`protocol`), the plan of a run (`plan`), each trial's
evaluation (`evaluation`, `ray_trial`), and the scorecard computed from per-seed CSVs (`scorecard`,
`figure`). `python -m nalu_rl.bench` runs it; docs/BENCHMARK.md describes it."""
