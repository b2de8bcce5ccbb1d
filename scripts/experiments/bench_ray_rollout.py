"""Makes docs/SCALING.md, "Remote actors for one run (not built): the numbers".

Round trip of one pixel rollout through Ray's object store, on this machine: could actors on other
machines feed one learner (docs/SCALING.md, "Remote actors")?

    python scripts/experiments/bench_ray_rollout.py [--agent nac] [--envs 64] [--unroll 20] [--repeats 30]

One rollout is one unroll slot of `RolloutBuffers` as the learner runtime holds it (obs[T+1] of
56x56x3 uint8 pixels and the stimulus, actions, log-probabilities, rewards, flags, the recurrent
state), as numpy arrays. Printed, median over the repeats (milliseconds):
- put: ray.put of the rollout in the driver;
- actor -> learner: an actor process returns a rollout it holds, the driver ray.gets it (the
  path of a rollout from a remote actor, minus the network);
- learner -> actor: the driver puts the rollout, an actor ray.gets it and answers (the same the
  other way);
- weights: the policy's weights, learner -> actor, the broadcast a synchronous actor waits for;
and the bytes that would cross a network, with the transfer time at 1 and 10 Gbit/s.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import time

import numpy as np
import torch


def pixel_rollout(agent: str, envs: int, unroll: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """One filled unroll slot of the learner runtime's buffers and the agent's weights, as numpy arrays."""
    from nalu_rl.checkpoint import build_model
    from nalu_rl.envs import TimeTrackEnv
    from nalu_rl.runtime.rollout import RolloutBuffers

    env = TimeTrackEnv(obs_mode="pixels")
    model = build_model(agent, env, None)
    buffers = RolloutBuffers(env.observation_space, model.initial_state(1), unroll, envs, 1, shared=False)
    rng = np.random.default_rng(0)
    rollout = {}
    for key, tensor in buffers.slot(0).items():
        array = tensor.numpy().copy()
        if array.dtype == np.uint8:  # random pixels: nothing for a transport to squeeze out
            array[...] = rng.integers(0, 256, size=array.shape, dtype=np.uint8)
        rollout[key] = array
    weights = {key: value.detach().numpy().copy() for key, value in model.state_dict().items()}
    return rollout, weights


def median_ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="nac")
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--unroll", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)

    import ray

    rollout, weights = pixel_rollout(args.agent, args.envs, args.unroll)
    rollout_bytes = sum(array.nbytes for array in rollout.values())
    weight_bytes = sum(array.nbytes for array in weights.values())
    pickled_bytes = len(pickle.dumps(rollout, protocol=5))
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:

        @ray.remote
        class Actor:
            def __init__(self, rollout: dict[str, np.ndarray]) -> None:
                self.rollout = {key: value.copy() for key, value in rollout.items()}

            def produce(self) -> dict[str, np.ndarray]:
                return self.rollout

            def consume(self, data: dict[str, np.ndarray]) -> int:
                return int(sum(array.nbytes for array in data.values()))

            def ping(self) -> int:
                return 0

        actor = Actor.remote(rollout)
        ray.get(actor.ping.remote())
        timings: dict[str, list[float]] = {
            "put": [],
            "actor_to_learner": [],
            "learner_to_actor": [],
            "weights": [],
            "empty_call": [],
        }
        for _ in range(args.repeats):
            started = time.perf_counter()
            reference = ray.put(rollout)
            timings["put"].append(time.perf_counter() - started)
            del reference

            started = time.perf_counter()
            received = ray.get(actor.produce.remote())
            int(received["obs.pixels"][-1, -1, -1, -1, -1])  # touch the data
            timings["actor_to_learner"].append(time.perf_counter() - started)
            del received

            started = time.perf_counter()
            assert ray.get(actor.consume.remote(ray.put(rollout))) == rollout_bytes
            timings["learner_to_actor"].append(time.perf_counter() - started)

            started = time.perf_counter()
            ray.get(actor.consume.remote(ray.put(weights)))
            timings["weights"].append(time.perf_counter() - started)

            started = time.perf_counter()
            ray.get(actor.ping.remote())
            timings["empty_call"].append(time.perf_counter() - started)
    finally:
        ray.shutdown()

    steps = args.unroll * args.envs
    print(
        f"rollout: {args.unroll} steps x {args.envs} envs of 56x56x3 pixels ({steps:,} env steps), "
        f"agent {args.agent}"
    )
    print(
        f"  bytes: {rollout_bytes / 1e6:.2f} MB in arrays, {pickled_bytes / 1e6:.2f} MB pickled; "
        f"weights {weight_bytes / 1e6:.2f} MB"
    )
    for name, label in (
        ("put", "ray.put in the driver"),
        ("actor_to_learner", "actor -> learner (actor returns it, driver ray.get)"),
        ("learner_to_actor", "learner -> actor (driver ray.put, actor ray.get, reply)"),
        ("weights", "weights learner -> actor (put, get, reply)"),
        ("empty_call", "empty actor call (task overhead)"),
    ):
        samples = timings[name]
        print(
            f"  {label}: median {median_ms(samples):.1f} ms (min {1000 * min(samples):.1f}, "
            f"max {1000 * max(samples):.1f}) over {len(samples)}"
        )
    for gbit in (1, 10):
        seconds = (rollout_bytes + weight_bytes) / (gbit * 1e9 / 8)
        print(
            f"  over {gbit} Gbit/s: rollout + weights take at least {1000 * seconds:.1f} ms on the wire "
            f"({steps / seconds:,.0f} env steps/s per actor if nothing else took time)"
        )


if __name__ == "__main__":
    main()
