"""What tflm-gen can run: checks a model before generation and names everything it cannot
run (ops with their versions), so the user sees the whole list at once."""

from __future__ import annotations

from tflm_gen.errors import UnsupportedModelError
from tflm_gen.kernels import kernel_catalogue
from tflm_gen.model import ir


def check_supported(model: ir.Model) -> None:
    """Raises UnsupportedModelError naming every op (with versions) we cannot run."""
    catalogue = kernel_catalogue()
    missing = sorted(
        {(op.custom_code or op.opcode, op.version) for op in model.subgraph.operators
         if op.opcode not in catalogue}
    )
    if missing:
        listed = ", ".join(f"{name} (version {version})" for name, version in missing)
        raise UnsupportedModelError(f"model uses operators tflm-gen does not support: {listed}")
