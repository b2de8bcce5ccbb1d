"""`python -m nalu_rl.sweep`: train agents x seeds, one `python -m nalu_rl.train` run per trial, on Ray
Tune, ending in one figure and table.

One concept per module, each importing only the ones above it in this list:
  launch.py       the first program of a trial's train process: unblock SIGINT, die with the trial,
                  become `python -m nalu_rl.train` (standard library only)
  folder.py       what the sweep keeps in a trial folder beside train's own files
  trial.py        one trial: its spec, and its train process launched, watched through the run's
                  run_status.json, and stopped (no Ray)
  progress.py     what the terminal shows: a trial's progress from its TensorBoard events, the
                  sweep's progress line
  plan.py         the grid (agents x seeds), the train options checked, the resources of a trial
  report.py       how each trial ended, the combined figure and Markdown table
  ray_backend.py  the trials as one Ray Tune experiment (the only module that imports Ray)
  __main__.py     the command line
Library code does not import this package.
"""
