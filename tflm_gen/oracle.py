"""The oracle: TensorFlow Lite Micro's own Python runtime (reference kernels), or LiteRT
where TFLM cannot run a model.  Our C output is compared with these, never with numpy.

Both run in a child process (tflm_gen.oracle_child, one per command, reused for every model
and invoke): a model the reference runtime crashes on (a segmentation fault, an abort) then
ends that process only, and the command stops with one line saying so (exit 2).  So does a
model it hangs on: each request has a time limit scaled to the model (timeout_seconds), after
which the process is killed."""

from __future__ import annotations

import atexit
import copy
import importlib.util
import itertools
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path

import numpy as np

from tflm_gen import errors, oracle_child
from tflm_gen.errors import InputError, ModelError, ToolchainError
from tflm_gen.model.reader import read_model
from tflm_gen.oracle_child import import_runtime
from tflm_gen.support import litert_only
from tflm_gen.text import one_line

ORACLES = oracle_child.ORACLES
ORACLE_NAMES = {"tflm": "TFLM reference kernels", "litert": "LiteRT reference kernels"}
RUNTIME_NAMES = {"tflm": "TFLM", "litert": "LiteRT"}
MODULES = {"tflm": "tflite_micro", "litert": "ai_edge_litert"}


def choose_oracle(model_bytes: bytes, against: str = "auto") -> tuple[str, str]:
    """The oracle for a model and why: TFLM, unless the model has operators only LiteRT's
    reference kernels run (GELU, RELU_0_TO_1, hybrid weights), which TFLM cannot run.
    An explicit `against` is kept, except TFLM for such a model (it would only fail)."""
    needs = litert_only(read_model(model_bytes))
    if against == "tflm" and needs:
        raise InputError("TFLM cannot run " + ", ".join(needs) + "; verify against litert")
    if against != "auto":
        return against, "requested"
    if needs:
        return "litert", "TFLM cannot run " + ", ".join(needs)
    return "tflm", "TFLM runs every operator"


def oracle_available(against: str = "tflm") -> bool:
    """Whether the runtime is installed (found, not imported: it runs in the oracle's
    process)."""
    return against in MODULES and importlib.util.find_spec(MODULES[against]) is not None


def arena_upper_bound(model) -> int:
    """More than TFLM can need: every activation alive at once, plus as much again for its
    own structures and scratch.  TFLM's default guess (10x the file) fails big activations."""
    from tflm_gen.model import ir

    tensors = model.subgraph.tensors
    return 2 * sum(ir.tensor_bytes(t) for t in tensors if not ir.is_constant(model, t))


def _runnable(model, model_bytes: bytes) -> bytes:
    """A partitioned model with its accelerator ops inlined (the reference runtimes know
    none of them): the original computation, which the partitioned one must equal; and
    absent biases given as -1 left out (_without_absent_bias)."""
    from tflm_gen.model.writer import write_model
    from tflm_gen.partition import inline_partitions

    inlined = _without_absent_bias(inline_partitions(model))
    return model_bytes if inlined is model else write_model(inlined)


def _without_absent_bias(model):
    """The model with a DEPTHWISE_CONV_2D's absent bias (input index -1, last) left out: the
    same computation, but TFLM's kernel reads a bias of index -1 as a tensor and crashes
    the process (segmentation fault), and LiteRT's refuses it; both take two inputs as no
    bias.  The model itself when no operator has one."""
    def absent_bias(op) -> bool:
        return op.opcode == "DEPTHWISE_CONV_2D" and len(op.inputs) == 3 and op.inputs[2] < 0

    if not any(absent_bias(op) for graph in model.subgraphs for op in graph.operators):
        return model
    result = copy.deepcopy(model)
    for graph in result.subgraphs:
        for op in graph.operators:
            if absent_bias(op):
                op.inputs = op.inputs[:2]
    return result


CHILD_COMMAND = [sys.executable, "-m", "tflm_gen.oracle_child"]
TIMEOUT_VARIABLE = "TFLM_GEN_ORACLE_TIMEOUT"  # seconds a request may take, instead of the scaled limit
# The limit of a request: the child's start and imports and a model's load, on a loaded
# machine, then per MAC a thousand times what TFLM's reference kernels take on a PC (about
# 10 ns: 0.1 s an invoke of pretrainedResnet_quant, 12.5 M MACs, whose limit is 3 minutes).
BASE_SECONDS = 60
SECONDS_PER_MAC = 1e-5


def timeout_seconds(model, invokes: int = 1) -> float:
    """How long a request of `invokes` invokes of `model` may take before the reference
    runtime is taken as hung: TIMEOUT_VARIABLE's seconds, else scaled to the MACs of every
    subgraph's operators."""
    from tflm_gen.inspect import operator_macs

    given = os.environ.get(TIMEOUT_VARIABLE, "")
    if given:
        try:
            seconds = float(given)
        except ValueError:
            seconds = 0.0
        if not 0 < seconds < float("inf"):
            raise InputError(f"{TIMEOUT_VARIABLE}={given!r}: give the seconds a request to "
                             "the reference runtime may take (a positive number)")
        return seconds
    macs = sum(operator_macs(graph, op) for graph in model.subgraphs for op in graph.operators)
    return BASE_SECONDS + invokes * macs * SECONDS_PER_MAC


class _Child:
    """The oracle's process (tflm_gen.oracle_child): started on first use, then shared by
    every Oracle of this process, so a command pays its start once.  A crash of the
    reference runtime ends it: the request then raises ModelError saying so, and the next
    Oracle starts another."""

    def __init__(self):
        # Appended to by the child, read here after a crash; lives as long as the process.
        self.log = tempfile.TemporaryFile(mode="a+b")  # noqa: SIM115
        root = str(Path(__file__).resolve().parent.parent)  # this tflm_gen, in the child too
        path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            CHILD_COMMAND, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.log, env={**os.environ, "PYTHONPATH": path})
        self.owner = os.getpid()  # a forked copy of this process starts its own
        self.lock = threading.Lock()
        self.dropped: list[int] = []  # models to forget, sent with the next request
        self.failure = ""
        self.hung = False  # the watchdog killed the process

    def usable(self) -> bool:
        return not self.failure and self.owner == os.getpid()

    def drop(self, handle: int) -> None:
        """Forgets a model at the next request (a finalizer: no I/O here)."""
        self.dropped.append(handle)

    def ask(self, request: tuple, against: str, timeout: float):
        """The reply's value; a refusal raises its error, a crash or no reply within
        `timeout` seconds ModelError."""
        with self.lock:
            if self.failure:
                raise ModelError(self.failure)
            start = os.fstat(self.log.fileno()).st_size
            watchdog = threading.Timer(timeout, self._kill_hung)
            watchdog.start()
            try:
                self._send(request)
                status, *reply = pickle.load(self.process.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                self.failure = (self._hung(against, timeout) if self.hung
                                else self._crash(against, start))
                raise ModelError(self.failure) from None
            except BaseException:  # interrupted mid-exchange: the pipe is out of step
                self.failure = "the oracle's process was interrupted"
                self.close()
                raise
            finally:
                watchdog.cancel()
            if self.hung:  # killed just after it replied: this reply stands, no other will
                self.failure = self._hung(against, timeout)
        if status == "error":
            kind, message = reply
            error = getattr(errors, kind, None)  # the child's own errors keep their type
            raise (error if isinstance(error, type) and issubclass(error, errors.TflmGenError)
                   else RuntimeError)(message)
        return reply[0]

    def close(self) -> None:
        """Ends the process: end of input lets it return; kill it if it does not."""
        if self.owner != os.getpid() or self.process.poll() is not None:
            return
        self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _send(self, request: tuple) -> None:
        dropped, self.dropped = self.dropped, []
        if dropped:
            pickle.dump(("drop", dropped), self.process.stdin)
        pickle.dump(request, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.process.stdin.flush()

    def _kill_hung(self) -> None:
        """The watchdog's action (its own thread): the blocked read then meets the end."""
        self.hung = True
        self.process.kill()

    def _hung(self, against: str, timeout: float) -> str:
        self.process.wait()
        return (f"the reference runtime ({RUNTIME_NAMES.get(against, against)}) did not "
                f"finish in {timeout:.0f} s on this model ({TIMEOUT_VARIABLE} sets the "
                "seconds to wait); our outputs were not compared")

    def _crash(self, against: str, start: int) -> str:
        """What ended the process, in one line, with the end of what it printed."""
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        how = f"exit status {code}"
        if code < 0:
            how = f"signal {-code} ({signal.Signals(-code).name})"
        size = os.fstat(self.log.fileno()).st_size
        log = one_line(os.pread(self.log.fileno(), 600, max(start, size - 600)).decode(
            errors="replace"))
        return (f"the reference runtime ({RUNTIME_NAMES.get(against, against)}) crashed on "
                f"this model: {how}{'; its log: ' + log if log else ''}; our outputs were "
                "not compared")


_CHILD: _Child | None = None
_HANDLES = itertools.count(1)


def _child() -> _Child:
    global _CHILD
    if _CHILD is None or not _CHILD.usable():
        _CHILD = _Child()
        atexit.register(_CHILD.close)
    return _CHILD


class Oracle:
    """One model loaded in the reference runtime, in the oracle's process; invokes keep
    state like ours do."""

    def __init__(self, model_bytes: bytes, against: str = "tflm", arena_bytes: int = 0):
        """arena_bytes: TFLM's arena when the default guess is too small (0: the guess)."""
        self.against = against
        self.model = read_model(model_bytes)
        self.timeout = timeout_seconds(self.model)
        request = ("load", next(_HANDLES), _runnable(self.model, model_bytes), against,
                   arena_bytes, len(self.model.subgraph.outputs))
        self._child, self._handle = _child(), request[1]
        self._child.ask(request, against, self.timeout)
        weakref.finalize(self, self._child.drop, self._handle)

    def _ask(self, verb: str, *args, timeout: float | None = None):
        return self._child.ask((verb, self._handle, *args), self.against,
                               timeout or self.timeout)

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return self._ask("run", [np.asarray(array) for array in inputs])

    def invoke_times(self, count: int) -> list[float]:
        """Microseconds of each of `count` invokes on the inputs already set, timed in the
        oracle's process."""
        return self._ask("invoke_times", count, timeout=timeout_seconds(self.model, count))

    def reset(self) -> None:
        self._ask("reset")


_ALLOCATIONS_SCRIPT = """
import sys
from tflite_micro.python.tflite_micro import runtime
data = sys.stdin.buffer.read()
runtime.Interpreter.from_bytes(data, arena_size=max(4 << 20, 10 * len(data))).print_allocations()
"""


def tflm_allocations(model_bytes: bytes) -> dict[str, int]:
    """TFLM's own recording allocator on this host: `total`, `head` and `tail` bytes.

    Run in a child process because the binding prints from C++ straight to the terminal.
    """
    import re
    import subprocess
    import sys

    if not oracle_available("tflm"):
        import_runtime("tflm")  # raises ToolchainError with the install hint
    runnable = _runnable(read_model(model_bytes), model_bytes)
    result = subprocess.run([sys.executable, "-c", _ALLOCATIONS_SCRIPT], input=runnable,
                            capture_output=True, check=False)
    text = (result.stdout + result.stderr).decode(errors="replace")
    found = re.findall(r"Arena allocation (total|head|tail) (\d+) bytes", text)
    if not found:
        raise ToolchainError(f"TFLM could not allocate this model: {text.strip()[-200:]}")
    return {name: int(value) for name, value in found}
