"""The Neural Accumulator (NAC) and the Neural Arithmetic Logic Unit (NALU) of Trask et al. (2018).

NAC:  W = tanh(W_hat) * sigmoid(M_hat),  y = x @ W.T  (no bias). W is biased towards -1, 0 and 1,
      so a trained NAC adds and subtracts its inputs and, being linear, does so at any magnitude.
NALU: g = sigmoid(x @ G.T),  a = x @ W.T,  m = exp(log(|x| + eps) @ W.T),  y = g * a + (1 - g) * m.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from nalu_rl.units.base import ArithmeticUnit, linear_forward

# The multiplicative path works in log space; its exponent is clamped to this magnitude so that m
# stays finite (|m| <= e^30 ~ 1.07e13, whose square still fits in float32) for any finite input.
DEFAULT_MAX_EXPONENT = 30.0


def nac_weight(w_hat: Tensor, m_hat: Tensor) -> Tensor:
    """The NAC's effective weight tanh(W_hat) * sigmoid(M_hat), every entry strictly inside (-1, 1)."""
    return torch.tanh(w_hat) * torch.sigmoid(m_hat)


class NAC(ArithmeticUnit):
    """Neural Accumulator: a bias-free linear layer whose weight is tanh(W_hat) * sigmoid(M_hat)."""

    weight_names = ("W_hat", "M_hat")

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__(in_features, out_features)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw W_hat and M_hat from a Glorot-uniform distribution, so W starts small and centred on 0."""
        nn.init.xavier_uniform_(self.W_hat)
        nn.init.xavier_uniform_(self.M_hat)

    @property
    def weight(self) -> Tensor:
        """The effective weight W [out, in], recomputed from W_hat and M_hat at every access."""
        return nac_weight(self.W_hat, self.M_hat)

    forward = linear_forward  # x [..., in] -> x @ W.T [..., out]


class NALU(ArithmeticUnit):
    """Neural Arithmetic Logic Unit: a learned gate between an additive and a multiplicative NAC path.

    Options: `eps` (added to |x| before the log), `tied_weights` (default True, as in the paper:
    one NAC weight serves both paths; False gives the multiplicative path its own NAC),
    `max_exponent` (clamp of the log-space output, keeps the multiplicative path finite).
    """

    weight_names = ("G",)

    def __init__(
        self,
        in_features: int,
        out_features: int,
        eps: float = 1e-7,
        tied_weights: bool = True,
        max_exponent: float = DEFAULT_MAX_EXPONENT,
    ) -> None:
        super().__init__(in_features, out_features)
        if eps <= 0:
            raise ValueError(f"eps must be > 0, got {eps}")
        if max_exponent <= 0:
            raise ValueError(f"max_exponent must be > 0, got {max_exponent}")
        self.eps = eps
        self.tied_weights = tied_weights
        self.max_exponent = max_exponent
        self.nac = NAC(in_features, out_features)
        # With tied weights one W both adds (linear space) and multiplies (log space): the paper's
        # choice, which lets a single learned selection of inputs serve either operation.
        self.multiplicative_nac = None if tied_weights else NAC(in_features, out_features)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialise both NAC paths and the gate (Glorot-uniform)."""
        self.nac.reset_parameters()
        if self.multiplicative_nac is not None:
            self.multiplicative_nac.reset_parameters()
        nn.init.xavier_uniform_(self.G)

    @property
    def weight(self) -> Tensor:
        """The effective weight of the additive NAC path (also the multiplicative one when tied)."""
        return self.nac.weight

    def gate(self, x: Tensor) -> Tensor:
        """The gate g = sigmoid(x @ G.T) in (0, 1): 1 selects addition, 0 multiplication."""
        return torch.sigmoid(nn.functional.linear(x, self.G))

    def multiplicative_path(self, x: Tensor) -> Tensor:
        """m = exp(log(|x| + eps) @ W.T), its exponent clamped to [-max_exponent, max_exponent]."""
        nac = self.nac if self.multiplicative_nac is None else self.multiplicative_nac
        exponent = nac(torch.log(torch.abs(x) + self.eps))
        return torch.exp(torch.clamp(exponent, -self.max_exponent, self.max_exponent))

    def forward(self, x: Tensor) -> Tensor:
        """x [..., in] -> g * a + (1 - g) * m [..., out]."""
        g = self.gate(x)
        return g * self.nac(x) + (1 - g) * self.multiplicative_path(x)

    def extra_options(self) -> str:
        return f"eps={self.eps}, tied_weights={self.tied_weights}, max_exponent={self.max_exponent}"
