"""The Ray Tune trial of a benchmark run: the sweep's train trial, then the protocol's evaluation of
the model it kept, in the same Ray worker (so a cluster spreads the evaluations as it does the
training). Imports Ray; the command imports it once its command line is checked."""

from __future__ import annotations

from typing import Any

from nalu_rl.bench.evaluation import evaluate_trial
from nalu_rl.bench.protocol import Protocol
from nalu_rl.errors import one_line
from nalu_rl.sweep.folder import write_trial_status
from nalu_rl.sweep.ray_backend import TrainRunTrial

# The keys of the config every benchmark trial receives beside its "trial" spec.
PROTOCOL_KEY = "bench_protocol"
RESULTS_KEY = "bench_results"  # {trial name: its per-seed CSV path}
IMPORTS_KEY = "bench_imports"
THREADS_KEY = "bench_threads"


class BenchTrial(TrainRunTrial):
    """Runs train; once it has finished, evaluates the model it kept into the trial's per-seed CSV."""

    def setup(self, config: dict[str, Any]) -> None:
        super().setup(config)
        self.protocol = Protocol.from_dict(config[PROTOCOL_KEY])
        self.out_csv = config[RESULTS_KEY][self.train.spec.name]
        self.imports = list(config[IMPORTS_KEY])
        self.threads = int(config[THREADS_KEY])
        self.evaluated: dict[str, Any] | None = None

    def step(self) -> dict[str, Any]:
        if self.evaluated is not None:  # Tune may ask once more after `done`
            return self.evaluated
        result = super().step()
        if result.get("done") and result.get("state") == "finished":
            import torch

            torch.set_num_threads(max(1, self.threads))
            try:
                evaluate_trial(
                    self.train.spec.folder, self.out_csv, self.protocol, self.train.spec.seed, self.imports
                )
            except Exception as error:  # the trial fails with its reason in one line; others go on
                reason = f"evaluation: {one_line(str(error))}"
                write_trial_status(self.train.spec.folder, {"status": "failed", "error": reason})
                result = {**result, "state": "failed", "error": reason}
            self.evaluated = result
        return result
