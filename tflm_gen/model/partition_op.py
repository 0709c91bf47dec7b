"""The custom op of a partitioned model (accelerators/README.md): its custom options are
8 bytes, the magic `TGP1` and the index of the subgraph it runs (uint32 little-endian).
runtime_c/tflm_model.h repeats the magic as TFLM_PARTITION_MAGIC (tests check both agree)."""

from __future__ import annotations

import struct

from tflm_gen.model import ir

PARTITION_MAGIC = b"TGP1"
OPTIONS_FORMAT = struct.Struct("<4sI")


def partition_options(subgraph: int) -> bytes:
    return OPTIONS_FORMAT.pack(PARTITION_MAGIC, subgraph)


def partition_subgraph(op: ir.Operator) -> int | None:
    """The subgraph a partition op runs, or None when `op` is not one."""
    options = op.custom_options
    if op.opcode != "CUSTOM" or len(options) != OPTIONS_FORMAT.size:
        return None
    magic, subgraph = OPTIONS_FORMAT.unpack(options)
    return subgraph if magic == PARTITION_MAGIC else None
