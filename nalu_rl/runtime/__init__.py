"""The training runtime: what moves rollouts between actors and the learner, and the run they serve.

One concept per module, each importing only the ones above it in this list:
  rollout.py   the rollout buffers in shared memory, a batch of unrolls, the weight store
  workers.py   the worker pool (processes with private pipes, restarted when they die) and the
               settings every worker process gets
  monitor.py   what a user watches: recent episodes, the progress bar, TensorBoard
  status.py    what a program watches: run_status.json (state, steps, why the run ended), its one writer
  logbook.py   the run's logs: its dashboard and status file, what one TensorBoard log writes, and
               what the logs count between writes (`LogBook`)
  stop_rule.py  why a run must end: signals, failures (NaN updates, dying workers), budgets, the target
  progress.py  the run's counts: steps, updates, episodes and their success window (`RunProgress`)
  run_checkpoints.py  when checkpoint.pt and best.pt are written, and the best score (`RunCheckpoints`)
  run.py       the run: model, optimizer and seeds, composing its progress, stop rule, logs and
               checkpoints (`TrainingRun`)
  run_folder.py  the run folder: created for a new run, read back (config, checkpoint) for --resume
  unroll.py    the one acting loop: a policy plays an env that steps a batch and returns tensors
               (a Gymnasium vector env through `VectorEnvTensors`, or a tensor env on a device)
  actor.py     acting: a vector env played by a CPU copy of the policy into rollout buffers
  update.py    the update of a rollout batch: the A3C or PPO loss and the one guarded step (`Learner`)
  learner.py   the learner runtime (actors feed one learner)
  hogwild.py   the hogwild runtime (workers apply gradients to one shared model)
  device_env.py  the timing tasks as tensors on a device, running the rules of nalu_rl.envs.rules
  device.py    the device runtime (the tensor envs, the policy and the learner in one process)
  training.py  one training run from start to end, whichever runtime it uses
The command line (`nalu_rl.train`) parses options, calls `training.train`, then evaluates.
"""
