"""MMER, the max-mean episodic reward: the score POPGym reports for a model on a task.

POPGym (Morad et al., "POPGym: Benchmarking Partially Observable Reinforcement Learning", ICLR 2023)
scores a training run by the mean return of the episodes of each epoch (one train batch of its PPO),
and takes the best of those means over the run. Its tasks scale their rewards so that an episode's
return lies in [-1, 1], so MMER does too.

What an epoch is here. POPGym's epoch is its PPO's train batch, 65,536 environment steps
(1,024 steps x 4 workers x 16 envs). An update of this project trains on a far smaller batch (1,280
steps on `train`'s defaults) and the three runtimes batch differently, so an epoch here is a fixed
EPOCH_STEPS = 65,536 environment steps of the run, whichever runtime: the size of POPGym's. Epoch k
spans the run's steps (k * EPOCH_STEPS, (k + 1) * EPOCH_STEPS], counted from the step at which the
MMER started (0 for a new run). The runtimes report a batch at a time
(its steps and the episodes that ended in it); the episodes of a batch belong to the epoch in which
its last step falls. An epoch in which no episode ended has no mean and does not count.

MMER is the largest mean over the complete epochs. The unfinished last epoch does not count once an
epoch is complete (a mean over fewer episodes is noisier, and the maximum would favour it); a run
shorter than one epoch reports the mean of all its episodes so far, marked as such (`complete_epochs`
0). Everything here is the run's state: a checkpoint keeps it (`state`) and a resumed run continues
it (`restore`), the unfinished epoch included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium

# POPGym's PPO train batch (its baselines' bptt_cutoff 1024 x 4 workers x 16 envs per worker).
EPOCH_STEPS = 65_536
# The TensorBoard scalar of a POPGym run's MMER.
MMER_SCALAR = "popgym/mmer"


def is_popgym_env(env: gymnasium.Env) -> bool:
    """Whether `env` is one of POPGym's: its innermost env's class comes from the `popgym` package
    (so an env registered under another id, or wrapped, still counts; POPGym's ids start with
    "popgym-")."""
    module = type(env.unwrapped).__module__
    return module.split(".", 1)[0] == "popgym"


class MaxMeanEpisodicReward:
    """The MMER of one run, fed the run's step count and the returns of the episodes that ended."""

    def __init__(self, epoch_steps: int = EPOCH_STEPS, start_steps: int = 0) -> None:
        if epoch_steps < 1:
            raise ValueError(f"an MMER epoch must be at least one step, got {epoch_steps}")
        self.epoch_steps = epoch_steps
        # The step at which the current epoch ends, and the returns of its episodes so far.
        self.epoch_end = start_steps + epoch_steps
        self.epoch_return_sum = 0.0
        self.epoch_episodes = 0
        # The complete epochs, the best mean among them and the step at which that epoch ended.
        self.complete_epochs = 0
        self.best_mean: float | None = None
        self.best_at_steps = 0

    def add(self, steps: int, returns: Iterable[float]) -> None:
        """Report a batch: the run's step count after it (`steps`) and the returns of the episodes
        that ended in it. An epoch is complete once a batch reaches its end."""
        if steps > self.epoch_end:
            # The batch ends in a later epoch: the current one is complete without it.
            self._close_epoch()
            epochs_passed = -(-(steps - self.epoch_end) // self.epoch_steps)
            self.epoch_end += epochs_passed * self.epoch_steps
        for value in returns:
            self.epoch_return_sum += float(value)
            self.epoch_episodes += 1
        if steps == self.epoch_end:
            self._close_epoch()
            self.epoch_end += self.epoch_steps

    def _close_epoch(self) -> None:
        """Count the current epoch's mean (when an episode ended in it) and empty it."""
        if self.epoch_episodes:
            mean = self.epoch_return_sum / self.epoch_episodes
            self.complete_epochs += 1
            if self.best_mean is None or mean > self.best_mean:
                self.best_mean, self.best_at_steps = mean, self.epoch_end
        self.epoch_return_sum, self.epoch_episodes = 0.0, 0

    @property
    def value(self) -> float | None:
        """MMER: the best mean over the complete epochs; before any, the mean of the episodes so far,
        which all lie in the unfinished epoch (None before the first episode ends)."""
        if self.best_mean is not None:
            return self.best_mean
        return self.epoch_return_sum / self.epoch_episodes if self.epoch_episodes else None

    def record(self) -> dict[str, Any]:
        """What the run folder's run_status.json keeps under "mmer": the value (null before an episode),
        the complete epochs it is over (0: the partial first epoch's mean), the epoch's size in steps
        and the step at which the best epoch ended (null before a complete epoch)."""
        return {
            "value": self.value,
            "complete_epochs": self.complete_epochs,
            "epoch_steps": self.epoch_steps,
            "best_epoch_end_steps": self.best_at_steps if self.best_mean is not None else None,
        }

    def summary(self) -> str:
        """The line a finished run prints: `MMER: <value>` and what it is over."""
        if self.value is None:
            return "MMER: none (no episode ended)"
        if self.best_mean is None:
            return (
                f"MMER: {self.value:.4f} (mean return of the {self.epoch_episodes} episodes so far; "
                f"no complete epoch of {self.epoch_steps:,} steps yet)"
            )
        return (
            f"MMER: {self.value:.4f} (best mean episode return over {self.complete_epochs} epochs of "
            f"{self.epoch_steps:,} steps, reached in the epoch ending at step {self.best_at_steps:,})"
        )

    def state(self) -> dict[str, Any]:
        """Everything a resumed run needs to continue this MMER (checkpoint-safe: ints, floats, None)."""
        return {
            "epoch_steps": self.epoch_steps,
            "epoch_end": self.epoch_end,
            "epoch_return_sum": self.epoch_return_sum,
            "epoch_episodes": self.epoch_episodes,
            "complete_epochs": self.complete_epochs,
            "best_mean": self.best_mean,
            "best_at_steps": self.best_at_steps,
        }

    @classmethod
    def restore(cls, state: Mapping[str, Any]) -> MaxMeanEpisodicReward:
        """The MMER a checkpoint's `state()` kept (KeyError, TypeError or ValueError when it is malformed)."""
        tracker = cls(int(state["epoch_steps"]))
        tracker.epoch_end = int(state["epoch_end"])
        tracker.epoch_return_sum = float(state["epoch_return_sum"])
        tracker.epoch_episodes = int(state["epoch_episodes"])
        tracker.complete_epochs = int(state["complete_epochs"])
        best_mean = state["best_mean"]
        tracker.best_mean = None if best_mean is None else float(best_mean)
        tracker.best_at_steps = int(state["best_at_steps"])
        if tracker.epoch_episodes < 0 or tracker.complete_epochs < 0:
            raise ValueError(f"negative counts in the stored MMER state {dict(state)}")
        return tracker
