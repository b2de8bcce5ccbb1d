"""The single and the vector env take one argument list: the fields of TimeTrackConfig."""

from __future__ import annotations

import dataclasses

import pytest

from nalu_rl.envs import TimeTrackEnv, TimeTrackVectorEnv
from nalu_rl.envs.rules import TimeTrackConfig

OPTIONS = {
    "size": 6,
    "delay_range": (3, 9),
    "max_delay": 50,
    "slack": 2,
    "obs_mode": "symbolic",
    "stimulus": "always",
    "reward_mode": "exact",
    "cell_px": 4,
    "render_mode": "rgb_array",
}


def test_single_and_vector_env_build_the_same_config_from_the_same_arguments() -> None:
    single, vector = TimeTrackEnv(**OPTIONS), TimeTrackVectorEnv(2, **OPTIONS)
    assert single.config == vector.config == TimeTrackConfig(**OPTIONS)
    assert single.render_mode == vector.render_mode == "rgb_array"


def test_the_env_arguments_are_the_config_fields() -> None:
    arguments = {field.name for field in dataclasses.fields(TimeTrackConfig) if field.init}
    assert arguments == set(OPTIONS)


@pytest.mark.parametrize("make", [TimeTrackEnv, lambda **options: TimeTrackVectorEnv(2, **options)])
def test_an_unknown_or_derived_argument_is_refused_by_both_envs(make) -> None:
    for name in ("sizes", "timeout_slack"):
        with pytest.raises(TypeError, match=name):
            make(**{name: 3})
