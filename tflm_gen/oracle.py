"""The oracle: TensorFlow Lite Micro's own Python runtime (reference kernels), or LiteRT
where TFLM cannot run a model.  Our C output is compared with these, never with numpy."""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import tempfile

import numpy as np

from tflm_gen.errors import InputError, ModelError, ToolchainError
from tflm_gen.model.reader import read_model
from tflm_gen.support import litert_only
from tflm_gen.text import one_line

ORACLES = ("tflm", "litert")
ORACLE_NAMES = {"tflm": "TFLM reference kernels", "litert": "LiteRT reference kernels"}


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
    try:
        _import(against)
    except ToolchainError:
        return False
    return True


def _import(against: str):
    try:
        if against == "tflm":
            from tflite_micro.python.tflite_micro import runtime

            return runtime
        if against == "litert":
            from ai_edge_litert import interpreter

            return interpreter
    except ImportError as error:
        raise ToolchainError(
            f"the {against} oracle is not installed ({error}); pip install 'tflm-gen[verify]'"
        ) from None
    raise ToolchainError(f"unknown oracle '{against}'; choose one of {', '.join(ORACLES)}")


@contextlib.contextmanager
def _reference_errors(against: str, action: str = "load"):
    """The reference runtimes print their reasons from C++ straight to file descriptor 2
    and then raise a bare RuntimeError: collect what they print and raise one ModelError
    line holding both."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        except (RuntimeError, ValueError) as error:  # the binding's way of refusing a model
            os.dup2(saved, 2)
            sink.seek(0)
            log = one_line(sink.read().decode(errors="replace"))
            raise ModelError(f"the {against} oracle cannot {action} the model: "
                             f"{one_line(str(error))}{'; its log: ' + log if log else ''}") from None
        finally:
            os.dup2(saved, 2)
            os.close(saved)


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


class Oracle:
    """One model loaded in the reference runtime; invokes keep state like ours do."""

    def __init__(self, model_bytes: bytes, against: str = "tflm", arena_bytes: int = 0):
        """arena_bytes: TFLM's arena when the default guess is too small (0: the guess)."""
        self.against = against
        model = read_model(model_bytes)
        self._output_count = len(model.subgraph.outputs)
        model_bytes = _runnable(model, model_bytes)
        with _reference_errors(against):
            self._load(_import(against), model_bytes, arena_bytes)

    def _load(self, module, model_bytes: bytes, arena_bytes: int) -> None:
        against = self.against
        if against == "tflm":
            # The default arena (10x the file) is too small for small models with big tensors.
            arena = max(4 << 20, 10 * len(model_bytes), arena_bytes)
            self._interpreter = module.Interpreter.from_bytes(model_bytes, arena_size=arena)
        else:
            resolver = module.OpResolverType.BUILTIN_REF
            self._interpreter = module.Interpreter(
                model_content=model_bytes, experimental_op_resolver_type=resolver
            )
            self._interpreter.allocate_tensors()

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        with _reference_errors(self.against, "run"):
            if self.against == "tflm":
                return self._run_tflm(inputs)
            return self._run_litert(inputs)

    def _run_tflm(self, inputs):
        for index, array in enumerate(inputs):
            self._interpreter.set_input(array, index)
        self._interpreter.invoke()
        return [np.array(self._interpreter.get_output(i)) for i in range(self._output_count)]

    def _run_litert(self, inputs):
        for detail, array in zip(self._interpreter.get_input_details(), inputs):
            self._interpreter.set_tensor(detail["index"], array)
        self._interpreter.invoke()
        return [
            np.array(self._interpreter.get_tensor(detail["index"]))
            for detail in self._interpreter.get_output_details()
        ]

    def invoke(self) -> None:
        """One invoke on the inputs already set (for timing)."""
        self._interpreter.invoke()

    def reset(self) -> None:
        if self.against == "tflm":
            self._interpreter.reset()
        else:
            self._interpreter.reset_all_variables()


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

    _import("tflm")
    runnable = _runnable(read_model(model_bytes), model_bytes)
    result = subprocess.run([sys.executable, "-c", _ALLOCATIONS_SCRIPT], input=runnable,
                            capture_output=True, check=False)
    text = (result.stdout + result.stderr).decode(errors="replace")
    found = re.findall(r"Arena allocation (total|head|tail) (\d+) bytes", text)
    if not found:
        raise ToolchainError(f"TFLM could not allocate this model: {text.strip()[-200:]}")
    return {name: int(value) for name, value in found}
