"""Running return normalisation: rewards divided by the running standard deviation of the discounted
return, the convention of Stable-Baselines3's `VecNormalize(norm_reward=True)` and CleanRL's
`NormalizeReward` wrapper.

Each actor keeps, per env, the discounted return so far, R_t = r_t + gamma * R_{t-1} (0 at an
episode's start), and writes it beside the reward; the learner folds those into running statistics
and trains on r_t / sqrt(Var[R] + eps), clipped to [-clip, clip]. The statistics are the run's
(saved in the checkpoint, so a resumed run continues them).
"""

from __future__ import annotations

import torch


class RewardNormalizer:
    """Running mean and variance of the discounted return (Chan et al.'s parallel update) and the
    reward scale they give."""

    def __init__(self, clip: float = 10.0, eps: float = 1e-8) -> None:
        self.clip = clip
        self.eps = eps
        self.count = 1e-4  # as SB3's RunningMeanStd: the first batch sets the statistics
        self.mean = 0.0
        self.var = 1.0

    def update(self, discounted_returns: torch.Tensor) -> None:
        """Fold a batch of discounted returns (any shape) into the running statistics."""
        values = discounted_returns.detach().double().flatten().cpu()
        if values.numel() == 0:
            return
        batch_mean, batch_var = float(values.mean()), float(values.var(unbiased=False))
        batch_count = values.numel()
        delta = batch_mean - self.mean
        total = self.count + batch_count
        squares = (
            self.var * self.count + batch_var * batch_count + delta**2 * self.count * batch_count / total
        )
        self.mean += delta * batch_count / total
        self.var = squares / total
        self.count = total

    @property
    def scale(self) -> float:
        """The divisor of the rewards: sqrt(Var[R] + eps)."""
        return (self.var + self.eps) ** 0.5

    def normalize(self, rewards: torch.Tensor) -> torch.Tensor:
        """`rewards` divided by the running scale, clipped to [-clip, clip]."""
        return (rewards / self.scale).clamp(-self.clip, self.clip)

    def state_dict(self) -> dict[str, float]:
        """The running statistics, plain floats (a checkpoint loads them with weights_only=True)."""
        return {"count": self.count, "mean": self.mean, "var": self.var}

    def load_state_dict(self, state: dict[str, float]) -> None:
        """Continue from saved statistics."""
        self.count, self.mean, self.var = float(state["count"]), float(state["mean"]), float(state["var"])
