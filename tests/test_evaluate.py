import csv
import itertools
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from conftest import TINY_ENV_KWARGS, cli_exit_code

from nalu_rl.checkpoint import load_agent
from nalu_rl.cli import parse_delays
from nalu_rl.envs import TimeTrackVectorEnv, success_ceiling
from nalu_rl.evaluate import main
from nalu_rl.evaluation import (
    CSV_COLUMNS,
    evaluate_and_write,
    play_episodes,
    slot_quotas,
    success_by_delay,
)

ENV_KWARGS = TINY_ENV_KWARGS


def run(argv):
    return cli_exit_code(main, argv)


def read_rows(path):
    with open(path, newline="") as file:
        reader = csv.DictReader(file)
        return reader.fieldnames, list(reader)


def test_evaluate_cli_writes_the_spec_columns_and_counts(lstm_checkpoint, tmp_path):
    assert (
        run(
            [
                "--checkpoint",
                str(lstm_checkpoint),
                "--delays",
                "1-3,20",
                "--episodes",
                "30",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    header, rows = read_rows(tmp_path / "success_by_delay.csv")
    assert tuple(header) == CSV_COLUMNS
    assert [int(row["delay"]) for row in rows] == [1, 2, 3, 20]
    for row in rows:
        successes, episodes = int(row["successes"]), int(row["episodes"])
        assert row["agent"] == "lstm"
        assert episodes == 30 and 0 <= successes <= episodes
        assert float(row["success_rate"]) == pytest.approx(successes / episodes, abs=1e-6)
        assert float(row["ceiling"]) == pytest.approx(success_ceiling(int(row["delay"])), abs=1e-6)
        assert float(row["ci_low"]) <= float(row["success_rate"]) <= float(row["ci_high"])
    assert (tmp_path / "success_by_delay.png").read_bytes()[:4] == b"\x89PNG"


def test_evaluate_and_write_returns_the_csv_path(lstm_checkpoint, tmp_path):
    model, config = load_agent(lstm_checkpoint)
    path = evaluate_and_write(model, config, tmp_path / "eval", delays=[4, 9], episodes=5, greedy=True)
    assert path == tmp_path / "eval" / "success_by_delay.csv"
    _, rows = read_rows(path)
    assert [(row["delay"], row["episodes"]) for row in rows] == [("4", "5"), ("9", "5")]
    assert (tmp_path / "eval" / "success_by_delay.png").is_file()


def test_a_delay_gives_the_same_episodes_whichever_delays_come_with_it(lstm_checkpoint):
    model, config = load_agent(lstm_checkpoint)
    alone = success_by_delay(model, config, [7], episodes=40, seed=3)
    together = success_by_delay(model, config, [2, 7, 15], episodes=40, seed=3)
    assert alone[0].outcomes == together[1].outcomes


def scripted_policy(size):
    """Even slots walk straight to the target (early, short episodes); odd slots wait and arrive
    exactly at T (success, long episodes). Tracks t itself from the episode-start flags."""
    elapsed = {}

    def act(observations, episode_start):
        grid = observations["grid"]
        batch = grid.shape[0]
        steps = elapsed.setdefault("t", np.zeros(batch, dtype=int))
        steps[episode_start] = 0
        delay = elapsed.setdefault("delay", np.zeros(batch))
        delay[episode_start] = observations["stimulus"][episode_start, 0]
        agent = np.argwhere(grid[:, 0].reshape(batch, -1))[:, 1]
        target = np.argwhere(grid[:, 1].reshape(batch, -1))[:, 1]
        row_gap = target // size - agent // size
        col_gap = target % size - agent % size
        move = np.select([row_gap < 0, row_gap > 0, col_gap < 0, col_gap > 0], [0, 1, 2, 3], 4)
        distance = np.abs(row_gap) + np.abs(col_gap)
        waits = (np.arange(batch) % 2 == 1) & (steps < delay - distance)
        steps += 1
        return np.where(waits, 4, move)

    return act


def test_episodes_of_different_lengths_are_counted_without_bias():
    delay, slots, episodes = 12, 8, 40
    env = TimeTrackVectorEnv(slots, delay_range=(delay, delay), **ENV_KWARGS)
    (outcomes,) = play_episodes(scripted_policy(5), [env], [slot_quotas(episodes, slots)], [11])
    # Every slot plays 5 episodes: 4 slots x 5 successes, 4 slots x 5 early arrivals, whatever
    # their lengths. "The first 40 episodes to finish" would count mostly the short ones.
    assert outcomes == Counter({"success": 20, "early": 20})


def test_slot_quotas_sum_to_the_episodes():
    assert slot_quotas(10, 4).tolist() == [3, 3, 2, 2]
    assert slot_quotas(200, 200).tolist() == [1] * 200


def test_ceiling_matches_an_exact_enumeration_of_placements():
    size = 5
    cells = list(itertools.product(range(size), repeat=2))
    distances = [abs(a[0] - b[0]) + abs(a[1] - b[1]) for a, b in itertools.permutations(cells, 2)]
    for delay in range(1, 12):
        exact = sum(distance <= delay for distance in distances) / len(distances)
        assert success_ceiling(delay, size=size) == pytest.approx(exact, abs=1e-12)
    spec = {1: 0.133, 2: 0.340, 3: 0.567, 4: 0.767, 5: 0.900, 6: 0.967, 7: 0.993, 8: 1.0}
    for delay, ceiling in spec.items():
        assert success_ceiling(delay, size=size) == pytest.approx(ceiling, abs=5e-4)


@pytest.mark.parametrize(
    ("spec", "delays"),
    [("1-4", [1, 2, 3, 4]), ("5,8,12", [5, 8, 12]), ("1-3,20,40", [1, 2, 3, 20, 40]), ("3,1-2,3", [1, 2, 3])],
)
def test_delay_specs_give_sorted_delays(spec, delays):
    assert parse_delays(spec) == delays


@pytest.mark.parametrize("spec", ["", "0-3", "a", "5-2", "1-", "1,,2"])
def test_bad_delay_specs_are_rejected(spec):
    with pytest.raises(ValueError, match="delay spec"):
        parse_delays(spec)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--checkpoint", "/nonexistent/x.pt"], "checkpoint not found"),
        (["--agent", "no-such-agent"], "no shipped checkpoint"),
        (["--checkpoint", "CKPT", "--delays", "3-1"], "bad delay spec"),
        (["--checkpoint", "CKPT", "--out", "/proc/forbidden"], "cannot write"),
        (["--checkpoint", "CKPT", "--episodes", "0"], "--episodes"),
    ],
)
def test_bad_input_ends_with_one_line_error(argv, message, lstm_checkpoint, tmp_path, capsys):
    argv = [str(lstm_checkpoint) if arg == "CKPT" else arg for arg in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path)]
    assert run(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error


def test_a_vector_env_that_met_its_quota_leaves_the_batch():
    batch_sizes, kept = [], []

    class RecordingPolicy:
        def __call__(self, observations, episode_start):
            batch_sizes.append(len(episode_start))
            return np.full(len(episode_start), 4)  # pass: every episode ends at its timeout

        def keep_rows(self, keep):
            kept.append(keep.tolist())

    short, long = (TimeTrackVectorEnv(3, delay_range=(delay, delay), **ENV_KWARGS) for delay in (1, 20))
    outcomes = play_episodes(RecordingPolicy(), [short, long], [slot_quotas(3, 3)] * 2, [0, 1])
    assert [sum(counts.values()) for counts in outcomes] == [3, 3]
    # T = 1 times out after 1 + 8 steps, T = 20 after 28: then its 3 rows are stepped alone.
    assert batch_sizes == [6] * 9 + [3] * 19
    assert kept == [[False] * 3 + [True] * 3]


def test_limits_and_training_range_come_from_the_checkpoints_environment(tmp_path, capsys):
    """An env whose own defaults differ from TimeTrack's (max_delay 20, delays 2..4), recorded without
    those options: evaluate, render and counter take its limits and range, not TimeTrack's."""
    import gymnasium
    import torch

    from nalu_rl import counter, render
    from nalu_rl.agents import make_agent
    from nalu_rl.checkpoint import save_checkpoint
    from nalu_rl.envs import TimeTrackEnv

    env_id = "nalu_rl_test/ShortTimeTrack-v0"
    if env_id not in gymnasium.registry:
        gymnasium.register(env_id, entry_point=TimeTrackEnv, kwargs={"max_delay": 20, "delay_range": (2, 4)})
    model = make_agent("lstm", TimeTrackEnv(**ENV_KWARGS).observation_space)
    config = {"agent": "lstm", "env_id": env_id, "env": ENV_KWARGS, "delay_range": [5, 12]}
    checkpoint = tmp_path / "short.pt"
    save_checkpoint(checkpoint, {"config": config, "model": model.state_dict()})
    refusals = {
        "max_delay 20": (main, ["--checkpoint", str(checkpoint), "--delays", "21", "--out", str(tmp_path)]),
        "--delay must be in 1..20": (render.main, ["--checkpoint", str(checkpoint), "--delay", "21"]),
        "training range 2-4": (
            counter.main,
            ["--checkpoint", str(checkpoint), "--delays", "5,8", "-o", str(tmp_path / "c.png")],
        ),
    }
    for message, (command, argv) in refusals.items():
        assert cli_exit_code(command, argv) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and message in error, error
    torch.manual_seed(0)
    assert (
        run(["--checkpoint", str(checkpoint), "--delays", "20", "--episodes", "2", "--out", str(tmp_path)])
        == 0
    )


def test_a_reader_that_closes_stdout_ends_the_command_without_a_traceback() -> None:
    # `python -m nalu_rl.evaluate ... | head -1`: the rest of the summary meets a closed pipe.
    program = (
        "from nalu_rl.cli import run_cli\n"
        "def main(argv):\n"
        "    print('T=5 success 1.000\\n' * 20000)\n"
        "    return 0\n"
        "run_cli(main)\n"
    )
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line
    finished = subprocess.run(
        [sys.executable, "-c", program], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60
    )
    os.close(write_end)
    assert finished.returncode == 1
    assert finished.stderr == ""
