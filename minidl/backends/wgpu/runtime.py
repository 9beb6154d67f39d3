"""The wgpu runtime under the ``Wgpu`` backend: adapter, device, buffers, pipelines, submits
(burn-wgpu's ``WgpuRuntime`` and cubecl's compute client, in miniature).

* ``wgpu`` (the Python binding of wgpu-native) is imported here, on first use of the device,
  never when ``minidl`` is imported: it is the optional ``gpu`` extra.
* Pipelines are cached by shader text (one compile per distinct kernel source).
* Dispatches are recorded into one command encoder and submitted together at a read-back
  (or every ``MAX_PENDING`` dispatches): a synced dispatch costs ~170 us on lavapipe, a
  batched one a fraction of that.
* A read-back that does not complete within ``READ_TIMEOUT`` seconds raises ``TimeoutError``
  instead of hanging.
* A buffer larger than the adapter's ``max-storage-buffer-binding-size`` is refused, naming
  the limit.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field

import numpy as np

#: Seconds a read-back may take before it is declared hung.
READ_TIMEOUT = float(os.environ.get("MINIDL_WGPU_READ_TIMEOUT", "60"))
#: Dispatches recorded before the encoder is submitted without a read-back.
MAX_PENDING = 256
#: Bytes of freed buffers the runtime keeps for reuse.
POOL_BYTES = 256 << 20
#: Bytes of the mappable buffer kept for read-backs (a larger read maps a buffer of its own).
STAGING_BYTES = 1 << 16
#: Bytes of the parameter arena shared by the dispatches of one submit.
ARENA_BYTES = 1 << 18
#: Threads per workgroup of the 1-D kernels.
WORKGROUP = 256
MAX_GROUPS = 65535

NO_ADAPTER_HELP = (
    "Device.wgpu(): no WebGPU adapter found. Install a GPU driver with Vulkan, Metal or D3D12 "
    "support, or, on a machine without a GPU, Mesa's software Vulkan driver "
    "(Debian/Ubuntu: `apt-get install mesa-vulkan-drivers`, which `make` installs), "
    "and the Python binding (`pip install minidl[gpu]`, i.e. wgpu)."
)


def _import_wgpu():
    try:
        import wgpu
    except ImportError as error:  # the optional extra is missing
        raise RuntimeError(
            "Device.wgpu() needs the Python package `wgpu` (the optional `gpu` extra: "
            "`pip install minidl[gpu]`)"
        ) from error
    return wgpu


class Runtime:
    """One wgpu device: its queue, its pipeline cache and its pending command encoder."""

    def __init__(self, index: int = 0):
        wgpu = _import_wgpu()
        self.wgpu = wgpu
        # lavapipe prints "XDG_RUNTIME_DIR is invalid or not set" without it
        if not os.environ.get("XDG_RUNTIME_DIR"):
            os.environ["XDG_RUNTIME_DIR"] = "/tmp"
        try:
            if index == 0:
                adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
            else:
                adapter = wgpu.gpu.enumerate_adapters_sync()[index]
        except Exception as error:  # noqa: BLE001 - wgpu raises several kinds here
            raise RuntimeError(f"{NO_ADAPTER_HELP} (wgpu said: {error})") from error
        if adapter is None:
            raise RuntimeError(NO_ADAPTER_HELP)
        self.adapter = adapter
        info = adapter.info
        self.adapter_name = f"{info.get('device', '?')} ({info.get('adapter_type', '?')}, {info.get('backend_type', '?')})"
        limits = adapter.limits
        wanted = {k: limits[k] for k in ("max-storage-buffer-binding-size", "max-buffer-size",
                                          "max-storage-buffers-per-shader-stage",
                                          "max-compute-workgroup-storage-size")}
        self.device = adapter.request_device_sync(required_limits=wanted)
        self.max_binding = int(min(wanted["max-storage-buffer-binding-size"], wanted["max-buffer-size"]))
        self.queue = self.device.queue
        self.flags = wgpu.BufferUsage
        self._pipelines: dict[str, tuple] = {}
        self._outputs: dict[str, int] = {}  # per pipeline source, its read-write bindings
        #: ids of buffers a captured program owns (minidl.capture.gpu): never pooled again
        self.pinned: set[int] = set()
        self._encoder = None
        self._pending = 0
        self._keep: list = []  # bind groups alive until their submit
        self._free: dict[int, list] = {}  # freed buffers by size, for reuse
        # every buffer a live Block holds, by id: the runtime keeps it reachable, so a Block
        # collected in a reference cycle cannot have its buffer finalized first (gc runs the
        # finalizers of a cycle in any order: wgpu's GPUBuffer.__del__ releases the handle, and
        # the Block's __del__ would then pool a dead buffer that aborts create_bind_group)
        self._live: dict[int, object] = {}
        self._pooled_bytes = 0
        # every dispatch's parameters go to one arena buffer, at aligned offsets, written once
        # per submit (a buffer made per dispatch cost ~0.15 ms of wgpu calls)
        self.align = max(4, int(limits["min-storage-buffer-offset-alignment"]))
        self._arena = self.device.create_buffer(size=ARENA_BYTES, usage=self.flags.STORAGE | self.flags.COPY_DST)
        self._arena_chunks: list[bytes] = []
        self._arena_used = 0  # bytes reserved, aligned
        self._arena_fill = 0  # bytes written into the chunks
        self._staging = None  # the mappable buffer of small read-backs, made on the first
        self.dispatches = 0  # counted for the book's "dispatches a Linear forward makes"
        self.recorders: list[list] = []  # open record_dispatches() lists
        self.submits = 0
        self.lock = threading.RLock()

    # ----- buffers ------------------------------------------------------------------------------
    def check_bytes(self, nbytes: int, op: str) -> None:
        if nbytes > self.max_binding:
            raise MemoryError(
                f"{op}: a buffer of {nbytes} bytes exceeds this adapter's limit "
                f"max-storage-buffer-binding-size = {self.max_binding} bytes ({self.adapter_name})"
            )

    def empty(self, nbytes: int, op: str = "alloc"):
        """A device buffer of at least ``nbytes``, reused from the pool when one of that size
        was freed (a fresh buffer costs an allocation and wgpu's zero fill on first use)."""
        self.check_bytes(nbytes, op)
        size = max(4, (nbytes + 3) // 4 * 4)
        free = self._free.get(size)
        if free:
            self._pooled_bytes -= size
            raw = free.pop()
        else:
            usage = self.flags.STORAGE | self.flags.COPY_SRC | self.flags.COPY_DST
            raw = self.device.create_buffer(size=size, usage=usage)
        self._live[id(raw)] = raw
        return Block(raw, size, self)

    def release(self, raw, size: int) -> None:
        """Take back the buffer of a dead :class:`Block` (a later dispatch may write it: the
        commands recorded before still read it first, passes run in order)."""
        self._live.pop(id(raw), None)
        if self._pooled_bytes + size <= POOL_BYTES and id(raw) not in self.pinned:
            self._free.setdefault(size, []).append(raw)
            self._pooled_bytes += size

    def pin(self, buffers) -> None:
        """Keep ``buffers`` out of the pool for good (a captured program owns them): taken out
        of the free lists now, and never pooled when the tensors viewing them die."""
        with self.lock:
            ids = {id(b) for b in buffers}
            self.pinned |= ids
            for size, free in self._free.items():
                kept = [b for b in free if id(b) not in ids]
                self._pooled_bytes -= size * (len(free) - len(kept))
                free[:] = kept

    def unpin(self, buffers) -> None:
        """Give ``buffers`` back to the pool's rules (a captured program was dropped)."""
        with self.lock:
            self.pinned -= {id(b) for b in buffers}

    def upload(self, array: np.ndarray, op: str = "upload"):
        data = np.ascontiguousarray(array)
        self.check_bytes(data.nbytes, op)
        if data.nbytes == 0:
            return self.empty(0, op)
        usage = self.flags.STORAGE | self.flags.COPY_SRC | self.flags.COPY_DST
        return self.device.create_buffer_with_data(data=data, usage=usage)

    def read(self, buffer, nbytes: int, check: bool = False) -> bytes:
        """Copy ``nbytes`` of ``buffer`` back (a sync point): the copy is recorded after the
        pending dispatches and submitted with them, into a mappable buffer (a kept one for
        small reads), which is then mapped. One submit and no thread per read: a 4-byte read
        took ~120 us this way against ~300 us through ``queue.read_buffer`` on a thread.
        ``check`` marks a validation's read (an index bound), which a capture lets through: its
        value only decides whether to raise, and a replay does not repeat the check."""
        if nbytes == 0:
            return b""
        size = (nbytes + 3) // 4 * 4
        with self.lock:
            small = size <= STAGING_BYTES
            if small and self._staging is None:
                self._staging = self._mappable(STAGING_BYTES)
            stage = self._staging if small else self._mappable(size)
            if self._encoder is None:
                self._encoder = self.device.create_command_encoder()
            self._encoder.copy_buffer_to_buffer(getattr(buffer, "raw", buffer), 0, stage, 0, size)
            self.flush()
            try:
                self.wait_mapped(stage, size)
                data = bytes(stage.read_mapped(0, size, copy=False))[:nbytes]
                stage.unmap()
            except TimeoutError:
                if small:
                    self._staging = None  # left pending: the next read maps a new one
                raise
            finally:
                if not small:
                    stage.destroy()
            return data

    def _mappable(self, size: int):
        return self.device.create_buffer(size=size, usage=self.flags.MAP_READ | self.flags.COPY_DST)

    def wait_mapped(self, stage, size: int) -> None:
        """Map ``stage`` for reading and wait until it is, at most ``READ_TIMEOUT`` seconds
        (wgpu's device poller thread resolves the map; its event is what this waits on)."""
        # "READ_NOSYNC" is what wgpu's own read_buffer maps with: the copy was just submitted,
        # so the empty submit a plain READ adds (wgpu-native issue 305) is not needed
        promise = stage.map_async("READ_NOSYNC", 0, size)
        event = getattr(promise, "_thread_event", None)
        if event is not None and not event.wait(READ_TIMEOUT):
            raise TimeoutError(
                f"Wgpu read-back did not complete within {READ_TIMEOUT:g} s on {self.adapter_name} "
                "(set MINIDL_WGPU_READ_TIMEOUT to wait longer)"
            )
        promise.sync_wait()

    def dummy(self):
        """A 4-byte buffer bound where a kernel's optional input (a bias) is absent."""
        if getattr(self, "_dummy", None) is None:
            self._dummy = self.empty(4, "dummy")
        return self._dummy

    # ----- pipelines and dispatches ---------------------------------------------------------------
    def pipeline(self, source: str, n_bindings: int, n_outputs: int = 1):
        """The compute pipeline of ``source`` (cached by its text): binding 0 is the params
        buffer, the last ``n_outputs`` bindings the outputs (read-write), the others inputs
        (read-only)."""
        cached = self._pipelines.get(source)
        if cached is not None:
            return cached
        wgpu = self.wgpu
        entries = []
        for i in range(n_bindings):
            kind = (wgpu.BufferBindingType.storage if i >= n_bindings - n_outputs
                    else wgpu.BufferBindingType.read_only_storage)
            entries.append({"binding": i, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": kind}})
        layout = self.device.create_bind_group_layout(entries=entries)
        module = self.device.create_shader_module(code=source)
        pipeline = self.device.create_compute_pipeline(
            layout=self.device.create_pipeline_layout(bind_group_layouts=[layout]),
            compute={"module": module, "entry_point": "main"},
        )
        cached = self._pipelines[source] = (pipeline, layout)
        self._outputs[source] = n_outputs
        return cached

    def dispatch(self, source: str, params: np.ndarray, buffers: list, groups: tuple[int, int, int],
                 symbols: dict | None = None) -> None:
        """Record one dispatch of ``source`` over ``groups`` workgroups; ``params`` (int32 words)
        becomes binding 0, ``buffers`` the bindings after it (the last one written, or the last
        ones: see :meth:`pipeline`). ``symbols`` names the words a captured replay recomputes
        (word index -> what: see :class:`Dispatched`); only the recorders look at it."""
        if min(groups) == 0:
            return
        with self.lock:
            pipeline, layout = self.pipeline(source, len(buffers) + 1)
            words = np.ascontiguousarray(params, dtype=np.int32).tobytes()
            if self._arena_used + len(words) > ARENA_BYTES:
                self.flush()  # the arena is full: submit what uses it
            offset = self._arena_used
            if offset > self._arena_fill:  # the alignment gap after the previous dispatch's words
                self._arena_chunks.append(bytes(offset - self._arena_fill))
            self._arena_chunks.append(words)
            self._arena_fill = offset + len(words)
            self._arena_used = offset + -(-len(words) // self.align) * self.align
            entries = [{"binding": 0, "resource": {"buffer": self._arena, "offset": offset, "size": len(words)}}]
            for i, buf in enumerate(buffers, start=1):
                raw = getattr(buf, "raw", buf)
                entries.append({"binding": i, "resource": {"buffer": raw, "offset": 0, "size": raw.size}})
            group = self.device.create_bind_group(layout=layout, entries=entries)
            if self._encoder is None:
                self._encoder = self.device.create_command_encoder()
            try:
                cpass = self._encoder.begin_compute_pass()
                cpass.set_pipeline(pipeline)
                cpass.set_bind_group(0, group)
                cpass.dispatch_workgroups(*groups)
                cpass.end()
            except BaseException:
                self._encoder, self._pending, self._keep = None, 0, []  # drop what it recorded
                self._arena_used = self._arena_fill = 0
                self._arena_chunks = []
                raise
            self._keep.append(group)
            if self.recorders:
                for recorder in self.recorders:
                    recorder.append(Dispatched(
                        source, tuple(groups), np.asarray(params).tolist(),
                        tuple(getattr(b, "raw", b) for b in buffers), self._outputs.get(source, 1),
                        dict(symbols or {})))
            self._pending += 1
            self.dispatches += 1
            if self._pending >= MAX_PENDING:
                self.flush()

    @contextlib.contextmanager
    def record_dispatches(self):
        """Collect every dispatch made inside the block as :class:`Dispatched` (its WGSL source,
        workgroups and parameters): what a Linear forward launches, say."""
        made: list[Dispatched] = []
        self.recorders.append(made)
        try:
            yield made
        finally:
            self.recorders.remove(made)

    def sync(self) -> None:
        """Submit what is pending and wait until the device has run it: a 4-byte read-back,
        queued after everything (wgpu 0.32's ``on_submitted_work_done_sync`` fails in cffi)."""
        self.read(self.dummy(), 4)

    def flush(self) -> None:
        """Submit every recorded dispatch as one command buffer."""
        with self.lock:
            if self._encoder is not None:
                encoder, self._encoder = self._encoder, None
                self._pending = 0
                chunks, self._arena_chunks = self._arena_chunks, []
                self._arena_used = self._arena_fill = 0
                try:  # a failed submit must not poison the next one: the encoder is dropped
                    if chunks:  # the dispatches' parameters, written before they run
                        self.queue.write_buffer(self._arena, 0, b"".join(chunks))
                    self.queue.submit([encoder.finish()])
                    self.submits += 1
                finally:
                    self._keep = []


@dataclass(frozen=True)
class Dispatched:
    """One recorded dispatch: the kernel's WGSL text, its workgroup grid, its ``p`` words, the
    buffers bound after ``p`` (the last ``n_outputs`` written) and ``symbols``: the words a
    captured replay recomputes, word index -> ``("scalar", kind, SymbolicScalar)`` (a declared
    scalar: kind ``f`` is written as float bits) or ``("counter", device index)`` (the random
    stream's counter, advanced per call)."""

    source: str
    groups: tuple[int, int, int]
    params: list
    buffers: tuple = ()
    n_outputs: int = 1
    symbols: dict = field(default_factory=dict)

    @property
    def entry(self) -> str:
        """The kernel's first line after its bindings and helpers (``@compute ...``)."""
        return self.source[self.source.index("@compute"):].splitlines()[0]


class Block:
    """A pooled device buffer: ``raw`` is the wgpu buffer; when the last tensor viewing it
    dies, the runtime takes ``raw`` back for the next allocation of its size."""

    __slots__ = ("raw", "size", "runtime")

    def __init__(self, raw, size: int, runtime: Runtime):
        self.raw, self.size, self.runtime = raw, size, runtime

    def __del__(self):
        try:
            self.runtime.release(self.raw, self.size)
        except Exception:  # noqa: BLE001 - at interpreter exit the runtime may be gone
            pass


def groups_1d(n: int) -> tuple[int, int, int]:
    """Workgroups covering ``n`` threads of a 1-D kernel (a 2-D grid past 65535 groups)."""
    groups = -(-n // WORKGROUP)
    if groups <= MAX_GROUPS:
        return (groups, 1, 1)
    return (MAX_GROUPS, -(-groups // MAX_GROUPS), 1)


_RUNTIMES: dict[int, Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def runtime(index: int = 0) -> Runtime:
    """The runtime of ``Device.wgpu(index)``, made on first use."""
    rt = _RUNTIMES.get(index)
    if rt is None:
        with _RUNTIMES_LOCK:
            rt = _RUNTIMES.get(index)
            if rt is None:
                rt = _RUNTIMES[index] = Runtime(index)
    return rt
