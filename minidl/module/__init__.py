"""burn-core's module system: ``Module``, ``Param`` (lazy, with ``Flag``), ``RunningState``,
``Initializer`` and ``@config`` (burn-core's ``module``, ``config``).

Imports point down: ``minidl.module`` uses ``minidl.tensor`` and ``minidl.dispatch``; the
layers in ``minidl.nn`` and the optimizers in ``minidl.optim`` build on it.
"""

from __future__ import annotations

from minidl.module.base import Module
from minidl.module.config import Config, ConfigEnum, ConfigError, config, is_config
from minidl.module.initializer import Initializer
from minidl.module.param import Flag, Param, new_param_id
from minidl.module.record import RecordError
from minidl.module.running import RunningState
from minidl.module.visitor import ModuleMapper, ModuleVisitor

__all__ = [
    "Config",
    "ConfigEnum",
    "Flag",
    "Initializer",
    "Module",
    "ModuleMapper",
    "ModuleVisitor",
    "Param",
    "RecordError",
    "RunningState",
    "ConfigError",
    "config",
    "is_config",
    "new_param_id",
]
