"""A recurrent cell made of one arithmetic unit: h_t = unit([x_t, h_{t-1}])."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from nalu_rl.units.registry import unit_class


class RecurrentUnit(nn.Module):
    """Feeds an arithmetic unit its own previous output: h_t = unit(concat(x_t, h_{t-1})).

    The unit has `input_features + state_features` inputs and `state_features` outputs; extra
    keyword options go to the unit. With a NAC or NAU the recurrence is linear, so a unit whose
    weight on h_{t-1} is the identity accumulates its inputs over any number of steps.
    """

    def __init__(
        self,
        unit: str | type[nn.Module],
        input_features: int,
        state_features: int,
        **options: Any,
    ) -> None:
        super().__init__()
        if input_features < 0 or state_features < 1:
            raise ValueError(
                f"input_features must be >= 0 and state_features >= 1, got {input_features}, {state_features}"
            )
        self.input_features = input_features
        self.state_features = state_features
        self.unit = unit_class(unit)(input_features + state_features, state_features, **options)

    def reset_parameters(self) -> None:
        """Re-initialise the unit."""
        self.unit.reset_parameters()

    def initial_state(self, batch_size: int) -> Tensor:
        """A zero state [batch_size, state_features] on the unit's device and dtype."""
        parameter = next(self.unit.parameters())
        return parameter.new_zeros(batch_size, self.state_features)

    def step(self, x: Tensor, h: Tensor) -> Tensor:
        """One step: x [B, in], h [B, state] -> the next state [B, state]."""
        return self.unit(torch.cat([x, h], dim=-1))

    def forward(self, x_seq: Tensor, h0: Tensor, reset: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Run a sequence: x_seq [T, B, in], h0 [B, state], reset [T, B] bool -> (outputs [T, B, state], h_T).

        The state is zeroed before step t for every batch entry b where reset[t, b] is True (an
        episode started there); outputs[t] is the state after step t.
        """
        if x_seq.dim() != 3 or x_seq.shape[-1] != self.input_features:
            raise ValueError(f"x_seq must be [T, B, {self.input_features}], got {list(x_seq.shape)}")
        if reset is not None and reset.shape != x_seq.shape[:2]:
            raise ValueError(f"reset must be [T, B] = {list(x_seq.shape[:2])}, got {list(reset.shape)}")
        h = h0
        outputs = []
        for t in range(x_seq.shape[0]):
            if reset is not None:
                h = h * (~reset[t].bool()).unsqueeze(-1).to(h.dtype)
            h = self.step(x_seq[t], h)
            outputs.append(h)
        return torch.stack(outputs), h

    def regularizer(self) -> Tensor:
        """The unit's regulariser (zero for NAC / NALU)."""
        return self.unit.regularizer()

    def extra_repr(self) -> str:
        return f"input_features={self.input_features}, state_features={self.state_features}"
