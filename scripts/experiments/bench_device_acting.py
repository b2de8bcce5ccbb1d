"""Makes docs/PERFORMANCE.md, "The device runtime on CPU (2026-12-05)".

Where an unroll of the device runtime spends its time on the CPU: the tensor env's step alone, and
a whole unroll (env + policy) with 1 and with 2 torch threads, in turns.

    python scripts/experiments/bench_device_acting.py                 # nac, 128 envs, symbolic and pixels
    python scripts/experiments/bench_device_acting.py --envs 64 --rounds 6
"""

from __future__ import annotations

import argparse
import time

import torch

from nalu_rl.agents import make_agent
from nalu_rl.config import Config
from nalu_rl.runtime.device import DeviceActor, torch_threads
from nalu_rl.runtime.device_env import make_tensor_env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="nac")
    parser.add_argument("--envs", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--modes", nargs="+", default=["symbolic", "pixels"], choices=("symbolic", "pixels"))
    arguments = parser.parse_args()
    for obs in arguments.modes:
        config = Config(agent=arguments.agent, obs=obs, runtime="device", device="cpu")
        env = make_tensor_env(config, arguments.envs, "cpu", seed=0)
        model = make_agent(arguments.agent, env.single_observation_space)
        actor = DeviceActor(model, env, config.unroll_length, config.precision, seed=0)
        actor.unroll()
        probe = make_tensor_env(config, arguments.envs, "cpu", seed=1)
        probe.reset()
        actions = torch.randint(0, 5, (200, arguments.envs))
        with torch_threads(1):
            started = time.perf_counter()
            for step_actions in actions:
                probe.step(step_actions)
            env_ms = (time.perf_counter() - started) / len(actions) * 1e3
        unroll_ms: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(arguments.rounds):
            for threads in unroll_ms:
                with torch_threads(threads):
                    started = time.perf_counter()
                    actor.unroll()
                    unroll_ms[threads].append((time.perf_counter() - started) * 1e3)
        print(
            f"{obs}, {arguments.envs} envs, {arguments.agent}: env step alone {env_ms:.2f} ms (1 thread); "
            f"unroll of {config.unroll_length} steps, ms per round: "
            + "; ".join(
                f"{threads} thread{'s' if threads > 1 else ''}: {' '.join(f'{ms:,.0f}' for ms in values)}"
                for threads, values in unroll_ms.items()
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
