"""The Real Neural Power Unit (Heim et al., NeurIPS 2020) as a nalu_rl unit (docs/EXTENDING.md, "A unit").

y = exp(W log r) * cos(pi W k), with r = g * (|x| + eps) + (1 - g) and k = g * [x < 0]: a product
of powers of the inputs, signs included, where the gate g in [0, 1] (one per input) turns an input
off (r = 1, k = 0). The `npu` agent is `nac` whose accumulator adds NPU([stimulus, 1]) per step.

    cd examples && python -m nalu_rl.train --import custom_unit --agent npu --obs symbolic
"""

import math
from dataclasses import replace

import torch
from torch import Tensor, nn

from nalu_rl.agents import ArithmeticUnit, agent_wiring, register_agent, register_unit


class RealNPU(ArithmeticUnit):
    """The real NPU: raw weights W [out, in] (its effective weight) and a relevance gate [in]."""

    weight_names = ("W",)

    def __init__(self, in_features: int, out_features: int, eps: float = 1e-6) -> None:
        super().__init__(in_features, out_features)
        self.eps = eps
        self.gate = nn.Parameter(torch.empty(in_features))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """W Glorot-uniform, every input half relevant (g = 0.5)."""
        nn.init.xavier_uniform_(self.W)
        nn.init.constant_(self.gate, 0.5)

    @property
    def weight(self) -> Tensor:
        return self.W

    def forward(self, x: Tensor) -> Tensor:
        """x [..., in] -> [..., out]."""
        gate = self.gate.clamp(0.0, 1.0)
        relevance = gate * (x.abs() + self.eps) + (1.0 - gate)
        negative = gate * (x < 0).to(x.dtype)
        return torch.exp(torch.log(relevance) @ self.W.T) * torch.cos(math.pi * negative @ self.W.T)


register_unit("npu", RealNPU)
# The counter core `accumulator` builds the agent's unit by name: m_t = m_{t-1} + NPU([stimulus, 1]).
register_agent("npu", replace(agent_wiring("nac"), unit="npu"), "The nac agent with a Real NPU for its NAC.")
