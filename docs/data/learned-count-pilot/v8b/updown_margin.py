"""Pilot v8b: v8 (`updown_count.py`) whose gates' margin regulariser acts from the first step at
weight 0.1 instead of waiting for the success gate (injected into the straight-through backward:
the gradient of 0.1 * mean(relu(1 - |z|)) over a 20-step unroll). Agent `learned-updown-margin`."""

from dataclasses import replace

import torch
from torch import Tensor
from updown_count import UpDownCounterCore

from nalu_rl.agents import register_agent, register_core
from nalu_rl.agents.catalog import LEARNED_COUNT, SIGNED_COUNT_TRAINING
from nalu_rl.units.gate import BinaryGate

MARGIN_WEIGHT = 0.1
UNROLL = 20


class _StepWithMargin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return (z > 0).to(z.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (z,) = ctx.saved_tensors
        sigmoid = torch.sigmoid(z)
        margin_grad = -torch.sign(z) * (z.abs() < 1.0).to(z.dtype) * MARGIN_WEIGHT / (z.numel() * UNROLL)
        return grad_output * sigmoid * (1 - sigmoid) + margin_grad


class MarginGate(BinaryGate):
    def events(self, pre_activation: Tensor) -> Tensor:
        if self.training and torch.is_grad_enabled():
            return _StepWithMargin.apply(pre_activation)
        return (pre_activation > 0).to(pre_activation.dtype)

    def regularizer(self) -> Tensor:
        return self.linear.weight.new_zeros(())


class UpDownMarginCore(UpDownCounterCore):
    def __init__(self, inputs, input_widths, size, wiring):
        super().__init__(inputs, input_widths, size, wiring)
        for name in ("phase_gate", "event_gate"):
            old = getattr(self, name)
            new = MarginGate(old.in_features, old.out_features)
            new.load_state_dict(old.state_dict())
            setattr(self, name, new)


register_core("updown-margin-core", UpDownMarginCore)
register_agent(
    "learned-updown-margin",
    replace(LEARNED_COUNT, counter="updown-margin-core"),
    "v8 with the gates' margin regulariser from the start",
    training_defaults=SIGNED_COUNT_TRAINING,
)
