"""The arithmetic units: weights, exact arithmetic with hand-set weights, gradients, finiteness."""

from __future__ import annotations

import math

import pytest
import torch
from torch.func import functional_call

from nalu_rl import (
    ARITHMETIC_UNITS,
    NAC,
    NALU,
    NAU,
    NMU,
    clamp_unit_weights_,
    make_unit,
    register_unit,
    regularizer_scale,
    sparsity_regularizer,
    total_regularizer,
)
from nalu_rl.units import ArithmeticUnit, ClampedUnit, SignedNAU, SnappedNAU
from nalu_rl.units.nau import init_bound

IN_FEATURES = 100
SUBSET_A = slice(10, 30)  # a = sum of x[10:30]
SUBSET_B = slice(20, 45)  # b = sum of x[20:45]; overlaps subset A on x[20:30]


def _subset_sums(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x[..., SUBSET_A].sum(-1), x[..., SUBSET_B].sum(-1)


def _selection_weight(dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Rows (a, b): ones on each subset, zeros elsewhere."""
    weight = torch.zeros(2, IN_FEATURES, dtype=dtype)
    weight[0, SUBSET_A] = 1.0
    weight[1, SUBSET_B] = 1.0
    return weight


def _saturated_nac(target: torch.Tensor) -> NAC:
    """A NAC whose effective weight equals `target` (entries in {-1, 0, 1}) to float64 precision."""
    out_features, in_features = target.shape
    nac = NAC(in_features, out_features).double()
    with torch.no_grad():
        nac.W_hat.copy_(40.0 * target)
        nac.M_hat.copy_(torch.where(target != 0, 40.0, -40.0))
    return nac


@pytest.mark.parametrize("name", sorted(ARITHMETIC_UNITS))
def test_registry_builds_each_unit_by_name_and_it_accepts_any_leading_dims(name):
    unit = make_unit(name, 6, 3)
    assert isinstance(unit, ARITHMETIC_UNITS[name])
    for shape in [(6,), (4, 6), (5, 4, 6)]:
        assert unit(torch.rand(shape) + 0.5).shape == (*shape[:-1], 3)
    assert "in_features=6" in repr(unit) and "out_features=3" in repr(unit)


def test_registry_rejects_an_unknown_unit_by_name():
    with pytest.raises(ValueError, match="unknown arithmetic unit 'nacc'; registered arithmetic units: nac"):
        make_unit("nacc", 2, 1)


@pytest.fixture
def restored_units():
    """Units registered by a test are unregistered after it."""
    saved = dict(ARITHMETIC_UNITS)
    yield
    ARITHMETIC_UNITS.clear()
    ARITHMETIC_UNITS.update(saved)


@pytest.mark.usefixtures("restored_units")
def test_a_registered_unit_is_built_by_name_once_registered_and_not_replaced_silently():

    class Doubled(NAC):
        def forward(self, x):
            return 2 * super().forward(x)

    register_unit("doubled-nac", Doubled)
    assert isinstance(make_unit("doubled-nac", 3, 2), Doubled)
    with pytest.raises(ValueError, match="already registered"):
        register_unit("doubled-nac", NAC)
    register_unit("doubled-nac", NAC, replace=True)
    assert type(make_unit("doubled-nac", 3, 2)) is NAC
    with pytest.raises(ValueError, match="subclass of nalu_rl.units.ArithmeticUnit"):
        register_unit("linear", torch.nn.Linear)
    with pytest.raises(ValueError, match="non-empty string"):
        register_unit(" nac", NAC)


def test_nac_uses_the_weight_recomputed_after_an_optimiser_step():
    torch.manual_seed(0)
    nac = NAC(5, 2)
    x = torch.randn(8, 5)
    weight_before = nac.weight.detach().clone()
    optimizer = torch.optim.SGD(nac.parameters(), lr=0.5)
    nac(x).pow(2).sum().backward()
    optimizer.step()
    expected_weight = torch.tanh(nac.W_hat) * torch.sigmoid(nac.M_hat)
    assert not torch.allclose(nac.weight, weight_before)
    torch.testing.assert_close(nac.weight, expected_weight)
    torch.testing.assert_close(nac(x), x @ expected_weight.T)


def test_nac_weight_magnitude_is_below_one():
    torch.manual_seed(0)
    nac = NAC(50, 20)
    with torch.no_grad():
        nac.W_hat.normal_(0.0, 3.0)
        nac.M_hat.normal_(0.0, 3.0)
    assert nac.weight.abs().max() < 1.0
    with torch.no_grad():  # even fully saturated parameters never exceed 1
        nac.W_hat.fill_(1e4)
        nac.M_hat.fill_(1e4)
    assert nac.weight.abs().max() <= 1.0


def test_nac_has_no_bias():
    nac = NAC(7, 3)
    assert {name for name, _ in nac.named_parameters()} == {"W_hat", "M_hat"}
    assert torch.equal(nac(torch.zeros(4, 7)), torch.zeros(4, 3))


@pytest.mark.parametrize("name", sorted(ARITHMETIC_UNITS))
def test_gradients_match_finite_differences_in_float64(name):
    torch.manual_seed(1)
    unit = make_unit(name, 4, 3).double()
    # Keep the raw weights off the clamp's (and the snap's) kinks.
    if name in ("nau", "snap-nau", "grid-nau", "nmu"):
        with torch.no_grad():
            unit.W.uniform_(0.1, 0.9)
    x = (torch.rand(5, 4, dtype=torch.float64) + 0.5).requires_grad_()  # away from |x|'s kink at 0
    names = [parameter_name for parameter_name, _ in unit.named_parameters()]
    parameters = [parameter.detach().clone().requires_grad_() for _, parameter in unit.named_parameters()]

    def function(x, *values):
        return functional_call(unit, dict(zip(names, values, strict=True)), (x,))

    assert torch.autograd.gradcheck(function, (x, *parameters))


def test_hand_set_nac_adds_and_subtracts_exactly_far_outside_training_range():
    # Two layers as in the paper's static task: first (a, b), then (a + b, a - b). One layer could
    # not say a + b, as inputs in both subsets count twice there and |W| <= 1.
    first = _saturated_nac(_selection_weight())
    second = _saturated_nac(torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=torch.float64))
    x = torch.empty(64, IN_FEATURES, dtype=torch.float64).uniform_(-1e6, 1e6)
    a, b = _subset_sums(x)
    output = second(first(x))
    torch.testing.assert_close(output[:, 0], a + b, rtol=1e-12, atol=1e-6)
    torch.testing.assert_close(output[:, 1], a - b, rtol=1e-12, atol=1e-6)


def test_hand_set_nau_adds_and_subtracts_exactly_far_outside_training_range():
    first, second = NAU(IN_FEATURES, 2).double(), NAU(2, 2).double()
    with torch.no_grad():
        first.W.copy_(_selection_weight())
        second.W.copy_(torch.tensor([[1.0, 1.0], [1.0, -1.0]]))
    x = torch.empty(64, IN_FEATURES, dtype=torch.float64).uniform_(-1e6, 1e6)
    a, b = _subset_sums(x)
    output = second(first(x))
    torch.testing.assert_close(output[:, 0], a + b, rtol=1e-12, atol=1e-6)
    torch.testing.assert_close(output[:, 1], a - b, rtol=1e-12, atol=1e-6)
    assert first.regularizer() == 0 and second.regularizer() == 0


def test_hand_set_nalu_multiplies_and_divides_positive_inputs():
    first = _saturated_nac(_selection_weight())
    nalu = NALU(2, 2).double()
    with torch.no_grad():
        nalu.nac.W_hat.copy_(40.0 * torch.tensor([[1.0, 1.0], [1.0, -1.0]]))
        nalu.nac.M_hat.fill_(40.0)
        nalu.G.fill_(-40.0)  # gate closed on positive inputs: the multiplicative path alone
    x = torch.empty(64, IN_FEATURES, dtype=torch.float64).uniform_(0.1, 10.0)
    a, b = _subset_sums(x)
    output = nalu(first(x))
    torch.testing.assert_close(output[:, 0], a * b, rtol=1e-6, atol=0)
    torch.testing.assert_close(output[:, 1], a / b, rtol=1e-6, atol=0)


def test_hand_set_nmu_multiplies_exactly():
    first, nmu = NAU(IN_FEATURES, 2).double(), NMU(2, 1).double()
    with torch.no_grad():
        first.W.copy_(_selection_weight())
        nmu.W.fill_(1.0)
    x = torch.empty(64, IN_FEATURES, dtype=torch.float64).uniform_(-100.0, 100.0)
    a, b = _subset_sums(x)
    torch.testing.assert_close(nmu(first(x))[:, 0], a * b, rtol=1e-12, atol=1e-6)
    with torch.no_grad():  # a weight of 0 leaves its input out of the product
        nmu.W.copy_(torch.tensor([[1.0, 0.0]]))
    torch.testing.assert_close(nmu(first(x))[:, 0], a, rtol=1e-12, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nalu_multiplicative_path_stays_finite_for_inputs_up_to_1e6(dtype):
    torch.manual_seed(2)
    magnitudes = torch.tensor([0.0, 1e-30, 1e-7, 1.0, 1e3, 1e6], dtype=dtype)
    x = magnitudes[torch.randint(len(magnitudes), (256, IN_FEATURES))]
    x = x * torch.where(torch.rand(256, IN_FEATURES) < 0.5, -1.0, 1.0).to(dtype)
    for weight_scale in [1.0, 40.0, -40.0]:  # random, and every weight saturated at +1 or -1
        nalu = NALU(IN_FEATURES, 8).to(dtype)
        if weight_scale != 1.0:
            with torch.no_grad():
                nalu.nac.W_hat.copy_(weight_scale * nalu.nac.W_hat.sign())
                nalu.nac.M_hat.fill_(40.0)
        output = nalu(x)
        assert torch.isfinite(nalu.multiplicative_path(x)).all()
        assert torch.isfinite(output).all()
        output.mean().backward()
        assert all(torch.isfinite(parameter.grad).all() for parameter in nalu.parameters())


def test_nac_and_nalu_have_a_zero_regulariser():
    assert NAC(3, 2).regularizer() == 0
    assert NALU(3, 2).regularizer() == 0


def test_sparsity_regularizer_is_zero_only_at_discrete_weights():
    assert sparsity_regularizer(torch.tensor([-1.0, 0.0, 1.0, 1.0])) == 0
    assert sparsity_regularizer(torch.tensor([0.5, -0.5])) == pytest.approx(0.5)
    assert sparsity_regularizer(torch.tensor([0.9, 0.0])) == pytest.approx(0.05)


def test_regularizer_scale_warms_up_linearly_between_start_and_end():
    assert regularizer_scale(0, start=100, end=300, max_scale=0.1) == 0.0
    assert regularizer_scale(100, start=100, end=300, max_scale=0.1) == 0.0
    assert regularizer_scale(200, start=100, end=300, max_scale=0.1) == pytest.approx(0.05)
    assert regularizer_scale(300, start=100, end=300, max_scale=0.1) == pytest.approx(0.1)
    assert regularizer_scale(10_000, start=100, end=300, max_scale=0.1) == pytest.approx(0.1)


def test_nau_and_nmu_clamp_their_weights_and_the_regulariser_sums_over_a_model():
    nau, nmu = NAU(3, 2), NMU(3, 2)
    with torch.no_grad():
        nau.W.copy_(torch.tensor([[2.0, -3.0, 0.5], [0.0, 1.0, -1.0]]))
        nmu.W.copy_(torch.tensor([[2.0, -3.0, 0.5], [0.0, 1.0, 1.0]]))
    assert nau.weight.min() == -1 and nau.weight.max() == 1
    assert nmu.weight.min() == 0 and nmu.weight.max() == 1
    model = torch.nn.Sequential(nau, NAC(2, 3), nmu)
    total = total_regularizer(model)
    torch.testing.assert_close(total, nau.regularizer() + nmu.regularizer())
    assert total.item() == pytest.approx(0.5 / 6 + 0.5 / 6)
    clamp_unit_weights_(model)
    assert nau.W.abs().max() == 1 and nmu.W.min() == 0


def test_nau_starts_within_half_so_no_weight_starts_on_a_regulariser_zero():
    # Madsen & Johansen: r = min(1/2, sqrt(3) * Glorot std). A 2 -> 1 unit (the scalar count) has a
    # Glorot bound of 1.41, which clamped half its weights' starts to exactly +-1.
    assert init_bound(2, 1) == 0.5
    assert init_bound(100, 100) == pytest.approx(math.sqrt(3.0 / 100))
    torch.manual_seed(0)
    weights = torch.cat([NAU(2, 1).weight.detach().flatten() for _ in range(500)])
    assert weights.abs().max() <= 0.5
    assert weights.abs().max() > 0.45 and weights.min() < 0 < weights.max()
    assert NAU(100, 100).weight.abs().max() <= init_bound(100, 100)


def _nac_addition_relative_error(seed: int, steps: int = 300) -> float:
    """Train a NAC on y = x0 + x1 + x2 + x3 of 8 inputs in [-1, 1]; its relative error on [-100, 100]."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    target = torch.tensor([[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]])
    nac = NAC(8, 1)
    # A short second-moment memory (beta2 = 0.9): as the error shrinks the gradients through the
    # saturating tanh and sigmoid shrink too, and Adam's default beta2 = 0.999 keeps dividing them by
    # the large early ones (relative error ~3e-2 after 300 steps instead of ~1e-4).
    optimizer = torch.optim.Adam(nac.parameters(), lr=0.1, betas=(0.9, 0.9))
    for _ in range(steps):
        x = torch.rand(64, 8, generator=generator) * 2 - 1
        loss = (nac(x) - x @ target.T).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        x = (torch.rand(4096, 8, generator=generator) * 2 - 1) * 100
        truth = x @ target.T
        return ((nac(x) - truth).abs().mean() / truth.abs().mean()).item()


def test_nac_trained_on_small_inputs_extrapolates_addition_to_inputs_100x_larger():
    errors = [_nac_addition_relative_error(seed) for seed in range(10)]
    assert sum(error < 1e-3 for error in errors) >= 9, errors


@pytest.mark.parametrize(
    ("name", "parameter_names"),
    [("nac", ["W_hat", "M_hat"]), ("nalu", ["G", "nac.W_hat", "nac.M_hat"]), ("nau", ["W"]), ("nmu", ["W"])],
)
def test_every_unit_shares_the_base_and_keeps_its_checkpoint_parameter_names(
    name: str, parameter_names: list[str]
) -> None:
    unit = make_unit(name, 3, 2)
    assert isinstance(unit, ArithmeticUnit)
    assert [parameter_name for parameter_name, _ in unit.named_parameters()] == parameter_names
    assert all(parameter.shape == (2, 3) for parameter in unit.parameters())
    assert unit.extra_repr().startswith("in_features=3, out_features=2")
    regularizer = unit.regularizer()
    assert regularizer.shape == ()
    if isinstance(unit, ClampedUnit):
        torch.testing.assert_close(regularizer, sparsity_regularizer(unit.weight))
    else:
        assert regularizer.item() == 0.0


def test_signed_nau_regulariser_pulls_each_weight_to_plus_or_minus_one_keeping_its_sign():
    from nalu_rl.units import SignedNAU

    unit = SignedNAU(2, 1)
    with torch.no_grad():
        unit.W.copy_(torch.tensor([[0.2, -0.3]]))
    unit.regularizer().backward()
    # Gradient descent moves +0.2 up and -0.3 down: away from 0, towards +1 and -1.
    assert unit.W.grad[0, 0] < 0 < unit.W.grad[0, 1]
    with torch.no_grad():
        unit.W.copy_(torch.tensor([[1.0, -1.0]]))
    assert float(unit.regularizer().detach()) == 0.0


def test_a_unit_is_linear_only_while_its_forward_is_the_linear_one() -> None:
    """A core may read a linear unit's weight once per sequence; a subclass that changes the forward
    pass must not be read that way."""

    class Doubled(NAC):
        def forward(self, x):
            return 2 * super().forward(x)

    assert all(unit(3, 2).is_linear for unit in (NAC, NAU, SignedNAU, SnappedNAU))
    assert not any(unit(3, 2).is_linear for unit in (NALU, NMU, Doubled))
