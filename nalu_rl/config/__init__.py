"""The one configuration of a training run: `Config` (options.py), the command line generated from
it (parser.py) and the checks of its values, one per group of options (validation.py)."""

from nalu_rl.config.options import GENERIC_DEFAULT_AGENT, TIMING_TASK_FIELDS, Config
from nalu_rl.config.parser import agent_training_defaults, build_parser, parse_config
from nalu_rl.config.validation import validate

__all__ = [
    "GENERIC_DEFAULT_AGENT",
    "TIMING_TASK_FIELDS",
    "Config",
    "agent_training_defaults",
    "build_parser",
    "parse_config",
    "validate",
]
