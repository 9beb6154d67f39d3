"""The module modes as mappers: ``valid``, ``train``, ``freeze``, ``unfreeze``, ``no_grad``,
``set_require_grad``, ``to_device``, ``fork`` (burn 0.22's ``AutodiffModule::valid``,
``Module::train``, ``freeze``/``unfreeze``, ``no_grad``, ``to_device``, ``fork``).

What each one touches, which is what the train-vs-inference chapter measures:

============================  ======================  =====================================
mode                          training flags          float params
============================  ======================  =====================================
``valid()``                   off (frozen mark kept)  moved to the INNER device, no graph
``train()``                   back to "not frozen"    lifted to autodiff, grad if wanted
``freeze()``                  off + frozen mark       no grad (wish cleared)
``unfreeze()``                on, mark cleared        grad wanted again
``no_grad()``                 untouched               no grad
``set_require_grad(b)``       untouched               grad wanted = b
============================  ======================  =====================================

``valid()`` and ``train()`` rebuild every running state fresh, with the same id, from its
synced value (``valid()`` on the inner device): the copy no longer shares statistics with the
module it came from, as burn's ``RunningState::valid`` and ``RunningState::from_inner`` build
one ``with_id`` (``running.rs:220-232`` at v0.22.0-pre.2 and on main; ``train()`` is
``AutodiffModule::from_inner``, ``module/base.rs:184-188``). The map-based modes
(``freeze``, ``unfreeze``, ``no_grad``, ``set_require_grad``) keep the running state objects
shared, as burn's ``RunningState::map`` writes into the same ``Arc`` and returns ``self``.
"""

from __future__ import annotations

from minidl.dispatch import Device
from minidl.module.param import Flag, Param
from minidl.module.running import RunningState
from minidl.module.visitor import ModuleMapper
from minidl.tensor import Tensor


def _inner(tensor: Tensor) -> Tensor:
    return tensor.inner() if tensor.device.is_autodiff() else tensor


def lift(tensor: Tensor, require_grad: bool) -> Tensor:
    """``tensor`` as a fresh leaf on the autodiff twin of its device (its own device when it is
    already autodiff, so a checkpointing device stays one), tracked if asked."""
    target = tensor.device if tensor.device.is_autodiff() else tensor.device.autodiff()
    lifted = Tensor.from_inner(_inner(tensor), target)
    return lifted.require_grad() if require_grad else lifted


class ValidMapper(ModuleMapper):
    """``valid()``: flags off, params on the inner device, running states fresh and synced."""

    def map_param(self, path: str, param: Param) -> Param:
        value = param.val()
        if not value.device.is_autodiff():
            return param
        return param.with_value(value.inner())

    def map_flag(self, path: str, param: Param) -> Param:
        flag = param.val()
        return param.with_value(Flag(False, flag.trainable))

    def map_running_state(self, path: str, state: RunningState) -> RunningState:
        state.sync()
        return state.fresh(_inner(state.value()))


class TrainMapper(ModuleMapper):
    """``train()``: flags restored unless frozen, params lifted to autodiff (grad if wanted)."""

    def map_param(self, path: str, param: Param) -> Param:
        value = param.val()
        if value.device.is_autodiff() and value.is_require_grad() == param.require_grad:
            return param
        return param.with_value(lift(value, param.require_grad))

    def map_flag(self, path: str, param: Param) -> Param:
        flag = param.val()
        return param.with_value(Flag(flag.trainable, flag.trainable))

    def map_running_state(self, path: str, state: RunningState) -> RunningState:
        return state.fresh()  # synced value, same id, a new (unshared) state: from_inner


class RequireGradMapper(ModuleMapper):
    """``no_grad()`` / ``set_require_grad(b)``: tensors only; lazy params stay lazy."""

    def __init__(self, require_grad: bool):
        self.require_grad = bool(require_grad)

    def map_param(self, path: str, param: Param) -> Param:
        return param.with_require_grad(self.require_grad)


class FreezeMapper(RequireGradMapper):
    """``freeze()`` (``frozen=True``) / ``unfreeze()``: flags and gradients together."""

    def __init__(self, frozen: bool):
        super().__init__(require_grad=not frozen)
        self.frozen = bool(frozen)

    def map_flag(self, path: str, param: Param) -> Param:
        on = not self.frozen
        return param.with_value(Flag(on, on))


class ToDeviceMapper(ModuleMapper):
    """``to_device(d)`` (``fork=False``) / ``fork(d)``: params moved, running states moved to
    ``d``'s inner device. ``fork`` makes every param a fresh leaf (graph left behind).
    A param that wants gradients is tracked when it lands on an autodiff device."""

    def __init__(self, device: Device, fork: bool = False):
        self.device = device
        self.fork = fork

    def map_param(self, path: str, param: Param) -> Param:
        value = param.val()
        if self.fork:
            value = value.detach()
        moved = value.to_device(self.device)
        if self.device.is_autodiff() and param.require_grad and not moved.is_require_grad():
            moved = moved.require_grad()
        return param.with_value(moved)

    def map_running_state(self, path: str, state: RunningState) -> RunningState:
        target = self.device.inner()
        value = state.value_sync()
        if value.device == target and not value.device.is_autodiff():
            return state
        return state.fresh(_inner(value).to_device(target))
