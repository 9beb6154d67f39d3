"""Running an op *eagerly* on ``B``: right away, unrecorded (the one name fusion uses for it).

Two kinds of op run eagerly: the ops no fuser takes (burn-fusion records them too and its
stream runs them on the inner backend; here they are sync points for their inputs), and, on a
backend whose policy allows it, small ops on ready tensors (``Stream.eager_below``).

:func:`eager_op` builds, for a protocol op, a classmethod with the protocol's signature that
reads its inputs' values (draining the stream when one is pending), calls ``B``'s op, and
hands the results back as ready handles. ``Fusion[B]`` gets one for every required op it does
not record (gather, slicing, convolutions, pools, int ops, ...).
"""

from __future__ import annotations

import inspect

from minidl.backend import protocol_of
from minidl.backend.device import Device
from minidl.fusion.events import STREAM_LISTENERS, emit
from minidl.fusion.tensor import FusionTensor, small_value

#: the device kinds of fusion backends (``Fusion[Flex]``, ``Fusion[Wgpu]``)
FUSION_KINDS = ("fusion", "fusion_wgpu")


def inner_device(backend: type, device):
    """The inner backend's device for a fusion device (``Device.fusion(i)`` -> ``Device("flex", i)``)."""
    if isinstance(device, Device) and device.kind in FUSION_KINDS:
        return Device(backend.name, device.index)
    return device


def unwrap(cls, value):
    """Inner primitives for handles (reading pending ones drains the stream), recursively."""
    if isinstance(value, FusionTensor):
        return value.value
    if isinstance(value, list):
        return [unwrap(cls, v) for v in value]
    if isinstance(value, tuple):
        return tuple(unwrap(cls, v) for v in value)
    if isinstance(value, Device):
        return inner_device(cls._inner, value)
    return value


def wrap(cls, value):
    """Ready handles for the inner primitives in a result, recursively."""
    if isinstance(value, cls.stream.primitive):
        return cls.stream.ready(value)
    if isinstance(value, tuple):
        return tuple(wrap(cls, v) for v in value)
    if isinstance(value, list):
        return [wrap(cls, v) for v in value]
    return value


def _pending(value) -> bool:
    if isinstance(value, FusionTensor):
        return value.pending
    if isinstance(value, list | tuple):
        return any(_pending(v) for v in value)
    return False


def _ready_values(cls, args: tuple, limit: int | None = None) -> list | None:
    """The inner values of ``args`` when each is a ready handle (with fewer than ``limit``
    elements, when given) or a plain value (an option, a number, a tuple of ints, a device:
    ``B``'s); None when one is pending or larger, a list or a tuple that may hold handles
    (:func:`run_eager`'s general path unwraps those)."""
    values = []
    for v in args:
        t = type(v)
        if t is FusionTensor:
            v = v._value
            if v is None or (limit is not None and v.size >= limit):
                return None
        elif t is list or (t is tuple and any(type(e) is not int for e in v)):
            return None
        elif isinstance(v, Device):
            v = inner_device(cls._inner, v)
        values.append(v)
    return values


#: what :func:`run_ready` returns when an argument is not ready or plain
NOT_READY = object()


def run_ready(cls, op: str, args: tuple):
    """``B``'s ``op`` on ``args``, given in the protocol's order, when each is a ready handle or
    a plain value (:func:`_ready_values`), its result wrapped; :data:`NOT_READY` otherwise (the
    caller then takes :func:`run_eager`'s general path). A speed trick (ARCHITECTURE.md): a
    conv2d, a pool and their backward ops skip run_eager's dict of arguments by name."""
    values = _ready_values(cls, args)
    if values is None:
        return NOT_READY
    if STREAM_LISTENERS:
        emit("eager", op=op, backend=cls._inner.__name__)
    return wrap(cls, getattr(cls._inner, op)(*values))


def run_eager(cls, op: str, kwargs: dict):
    """Run ``op`` on ``B`` with the values of ``kwargs`` and wrap the result (a sync point
    when one of them is pending: the drain's reason names the op)."""
    args = {}
    for k, v in kwargs.items():  # the common case: ready handles and plain values
        if type(v) is FusionTensor and v._value is not None:
            args[k] = v._value
        elif (type(v) is FusionTensor or type(v) is list or isinstance(v, Device)
              or (type(v) is tuple and any(type(e) is not int for e in v))):
            args = None  # pending, or a container that may hold handles or devices
            break
        else:
            args[k] = v
    if args is None:
        if any(_pending(v) for v in kwargs.values()):
            cls.stream.drain(reason=f"{op} needs its inputs")
        args = {k: unwrap(cls, v) for k, v in kwargs.items()}
    if STREAM_LISTENERS:
        emit("eager", op=op, backend=cls._inner.__name__)
    return wrap(cls, getattr(cls._inner, op)(**args))


def eager_op(op: str):
    """A classmethod running ``op`` on the inner backend (inputs synced first)."""
    proto_fn = protocol_of(op).__dict__[op].__func__
    sig = inspect.signature(proto_fn)

    names = [name for name in sig.parameters if name != "cls"]
    defaults = {name: p.default for name, p in sig.parameters.items() if p.default is not p.empty}
    plain = all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in sig.parameters.values())
    positional = plain and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in sig.parameters.values())
    n_args = len(names)

    def method(cls, *args, **kwargs):
        if positional and not kwargs and len(args) == n_args:  # every argument, in order
            result = run_ready(cls, op, args)
            if result is not NOT_READY:
                return result
        if plain and len(args) <= len(names) and not kwargs.keys() & set(names[:len(args)]):
            # the arguments by name, as bind would give them (without its cost on every call)
            params = {**defaults, **dict(zip(names, args)), **kwargs}
        else:
            bound = sig.bind(cls, *args, **kwargs)
            bound.apply_defaults()
            params = dict(bound.arguments)
            params.pop("cls")
        return run_eager(cls, op, params)

    method.__name__ = method.__qualname__ = op
    method.__signature__ = sig
    method.__doc__ = f"``{op}`` on the inner backend (no fuser takes it; its inputs are synced)."
    return classmethod(method)


def eager_or_default(op: str):
    """A classmethod for a protocol default that ``B`` implements itself (``relu``, ``softmax``,
    ``layer_norm``, ...): when every tensor argument exists and is small, ``B``'s own kernel runs
    eagerly, as :func:`eager_op`'s ops do; otherwise the protocol's default runs with ``cls = Fusion[B]``,
    so its primitive ops are recorded and the fusers see them."""
    default = protocol_of(op).__dict__[op].__func__

    def method(cls, *args, **kwargs):
        stream = cls.stream
        if not kwargs and len(args) == 1:  # relu(tensor), sigmoid(tensor), ...: the common case
            tensor = args[0]
            value = tensor._value if type(tensor) is FusionTensor else small_value(tensor, stream.eager_below)
            if value is None or value.size >= stream.eager_below:
                return default(cls, *args)
            return stream.eager_result(op, getattr(cls._inner, op)(value))
        limit = stream.eager_below
        if not kwargs and (values := _ready_values(cls, args, limit)) is not None:
            # mean_dim(tensor, dim), relu_backward(x, grad): small ready handles and plain values;
            # float_zeros(shape, dtype, device), no tensor: B's own, not the default's host copy
            result = getattr(cls._inner, op)(*values)  # max_dim_with_indices: a pair
            if FusionTensor in map(type, args):
                stream.count_eager(op)
            return wrap(cls, result)
        tensors = [a for a in (*args, *kwargs.values()) if type(a) is FusionTensor]
        if tensors and all(small_value(t, limit) is not None for t in tensors):
            result = getattr(cls._inner, op)(*[unwrap(cls, a) for a in args],
                                             **{k: unwrap(cls, v) for k, v in kwargs.items()})
            stream.count_eager(op)
            return wrap(cls, result)
        return default(cls, *args, **kwargs)

    method.__name__ = method.__qualname__ = op
    method.__signature__ = inspect.signature(default)
    method.__doc__ = f"``{op}``: ``B``'s own kernel on small ready tensors, else the protocol default (recorded)."
    return classmethod(method)


def eager_adam_step(inner: type):
    """``Fusion[B].adam_step``, made when ``B`` offers one (``Flex.adam_step``): a **speed trick**
    (ARCHITECTURE.md, "Where speed tricks may live"; the caller is ``minidl/optim/fused.py``).

    Adam's update of one parameter as one call of ``B``'s kernel, on ready handles (pending
    inputs are drained first), its three results ready handles: on the training chapter's CNN
    the rule's fourteen tensor ops each paid this layer's wrapper (0.3 of a 3 ms step). It runs
    only where the stream runs small ops eagerly; a stream that records every op (burn's
    policy, a capture's recorded run) gets ``None``, the caller's signal to run the tensor ops,
    which are recorded and fused. ``outs`` (results written into given buffers, an input's own
    where ``aliasable`` allows, as on ``B``) drains the whole stream first: no recorded op may
    read a buffer after the kernel has overwritten it."""

    def adam_step(cls, param, grad, moment_1, moment_2, lr: float, beta_1: float, beta_2: float,
                  epsilon: float, correction_1: float, correction_2: float, outs=None):
        stream = cls.stream
        if not stream.eager_below:
            return None
        if outs is None and type(param) is FusionTensor and type(grad) is FusionTensor:
            # the usual call: ready handles, the moments too (None at the first step)
            p, g = param._value, grad._value
            m1 = moment_1._value if type(moment_1) is FusionTensor else moment_1
            m2 = moment_2._value if type(moment_2) is FusionTensor else moment_2
            if p is not None and g is not None and (m1 is not None or moment_1 is None) and (
                    m2 is not None or moment_2 is None):
                new, m1, m2 = cls._inner.adam_step(p, g, m1, m2, lr, beta_1, beta_2, epsilon,
                                                   correction_1, correction_2)
                stream.count_eager("adam_step")
                return stream.ready(new), stream.ready(m1), stream.ready(m2)
        stream.drain(reason="adam_step needs its inputs" if outs is None else "adam_step writes in place")
        values = [unwrap(cls, t) for t in (param, grad, moment_1, moment_2)]
        results = cls._inner.adam_step(*values, lr, beta_1, beta_2, epsilon, correction_1,
                                       correction_2, unwrap(cls, outs))
        stream.count_eager("adam_step")
        ready = stream.ready
        if outs is None:
            return ready(results[0]), ready(results[1]), ready(results[2])
        # a result written into a given handle's buffer is that handle
        return tuple(o if type(o) is FusionTensor and o._value is r else ready(r) for o, r in zip(outs, results))

    adam_step.__qualname__ = "adam_step"
    adam_step.__doc__ = (f"``{inner.__name__}.adam_step`` on ready handles (a speed trick, "
                         f"``minidl/fusion/eager.py``); ``None`` while the stream records every op.")
    #: the (input position, output index) pairs that may share a buffer: ``B``'s own
    adam_step.aliasable = getattr(inner.adam_step, "aliasable", frozenset())
    return classmethod(adam_step)
