"""The oracle's process: `python -m tflm_gen.oracle_child` loads models into TFLM or LiteRT
and invokes them for tflm_gen.oracle, which starts it once and reuses it, so that a crash
of the reference runtime (a segmentation fault, an abort) ends this process only and the
command says so.  It imports nothing of tflm-gen but the error types and `one_line`.

Requests arrive pickled on stdin, replies leave pickled on the stdout the process started
with; file descriptor 1 then points at 2, a file the parent reads after a crash, so that
what the runtimes print from C++ never mixes into the replies.  Requests (a tuple, its
first item the verb):
  ("load", handle, model_bytes, against, arena_bytes, output count) -> None
  ("run", handle, inputs) -> outputs          ("reset", handle) -> None
  ("invoke_times", handle, count) -> microseconds per invoke, timed here
  ("drop", handles): forget those models; no reply
A reply is ("ok", value) or ("error", error type name, message).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time

import numpy as np

from tflm_gen.errors import ToolchainError
from tflm_gen.text import one_line

ORACLES = ("tflm", "litert")


def import_runtime(against: str):
    """The reference runtime's Python module (ToolchainError when it is not installed)."""
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


class RuntimeRefusal(Exception):
    """The binding refused the model (a RuntimeError or ValueError); the message holds what
    the runtime printed meanwhile."""


def _logged(against: str, action: str, step):
    """step(), its refusal folded into one line with what the runtime printed from C++
    (to the log file on descriptor 2) while it ran."""
    sys.stderr.flush()
    start = os.lseek(2, 0, os.SEEK_END)
    try:
        return step()
    except (RuntimeError, ValueError) as error:  # the binding's way of refusing a model
        sys.stderr.flush()
        log = one_line(os.pread(2, 4096, start).decode(errors="replace"))
        raise RuntimeRefusal(f"the {against} oracle cannot {action} the model: "
                             f"{one_line(str(error))}{'; its log: ' + log if log else ''}") from None


class Loaded:
    """One model in its reference runtime; invokes keep state."""

    def __init__(self, model_bytes: bytes, against: str, arena_bytes: int, outputs: int):
        self.against, self.outputs = against, outputs
        module = import_runtime(against)
        self.interpreter = _logged(against, "load",
                                   lambda: self._load(module, model_bytes, arena_bytes))

    def _load(self, module, model_bytes: bytes, arena_bytes: int):
        if self.against == "tflm":
            # The default arena (10x the file) is too small for small models with big tensors.
            arena = max(4 << 20, 10 * len(model_bytes), arena_bytes)
            return module.Interpreter.from_bytes(model_bytes, arena_size=arena)
        resolver = module.OpResolverType.BUILTIN_REF
        interpreter = module.Interpreter(model_content=model_bytes,
                                         experimental_op_resolver_type=resolver)
        interpreter.allocate_tensors()
        return interpreter

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return _logged(self.against, "run", lambda: self._run(inputs))

    def _run(self, inputs) -> list[np.ndarray]:
        it = self.interpreter
        if self.against == "tflm":
            for index, array in enumerate(inputs):
                it.set_input(array, index)
            it.invoke()
            return [np.array(it.get_output(i)) for i in range(self.outputs)]
        for detail, array in zip(it.get_input_details(), inputs):
            it.set_tensor(detail["index"], array)
        it.invoke()
        return [np.array(it.get_tensor(detail["index"])) for detail in it.get_output_details()]

    def invoke_times(self, count: int) -> list[float]:
        """Microseconds of each of `count` invokes on the inputs already set."""
        times = []
        for _ in range(count):
            start = time.perf_counter()
            self.interpreter.invoke()
            times.append((time.perf_counter() - start) * 1e6)
        return times

    def reset(self) -> None:
        if self.against == "tflm":
            self.interpreter.reset()
        else:
            self.interpreter.reset_all_variables()


def _answer(models: dict[int, Loaded], request: tuple):
    """The value of one request (a model's methods, or loading one)."""
    verb, handle, *args = request
    if verb == "load":
        models[handle] = Loaded(*args)
        return None
    model = models[handle]
    return {"run": model.run, "reset": model.reset, "invoke_times": model.invoke_times}[verb](*args)


def serve(requests, replies) -> None:
    """Answers requests until the parent closes the pipe."""
    models: dict[int, Loaded] = {}
    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        if request[0] == "drop":
            for handle in request[1]:
                models.pop(handle, None)
            continue
        try:
            reply = ("ok", _answer(models, request))
        except RuntimeRefusal as error:
            reply = ("error", "ModelError", str(error))
        except Exception as error:  # noqa: BLE001 - any other failure goes back as a reply
            reply = ("error", type(error).__name__, one_line(str(error)))
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the command; we see EOF
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what the runtimes print goes to the log, never into the replies
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
