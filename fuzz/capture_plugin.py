"""A pytest plugin that turns the op tests into a seed generator: the first model a test
hands to the host runtime or to TFLM is saved, and the test stops there (nothing runs).

    python -m pytest -p fuzz.capture_plugin tests/test_ops_*.py   (FUZZ_CAPTURE_DIR=folder)
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


class Captured(Exception):
    """Raised once the model is saved: the rest of the test is not needed."""


def _save(model: bytes) -> None:
    folder = Path(os.environ["FUZZ_CAPTURE_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"op_{hashlib.sha256(model).hexdigest()[:16]}.tflite").write_bytes(model)
    raise Captured()


def pytest_configure(config) -> None:
    from tflite_micro.python.tflite_micro import runtime

    from tflm_gen import host

    def capture_host(self, model_bytes, *args, **kwargs):
        _save(bytes(model_bytes))

    def capture_tflm(model_bytes, *args, **kwargs):
        _save(bytes(model_bytes))

    host.HostInterpreter.__init__ = capture_host
    runtime.Interpreter.from_bytes = staticmethod(capture_tflm)
