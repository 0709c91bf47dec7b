"""The op descriptor table (tflm_gen.op_descriptors) covers every kernel and agrees with
the schema; the modules that used to keep their own op lists read it."""

from __future__ import annotations

import tflite

from tflm_gen import arena
from tflm_gen.builtin_header import builtin_codes
from tflm_gen.kernels import kernel_catalogue
from tflm_gen.op_descriptors import DESCRIPTORS, describe


def test_every_kernel_has_a_descriptor_with_an_allocation_model():
    for op in kernel_catalogue():
        assert DESCRIPTORS[op].arena is not None, op
        assert op in arena.KERNELS, op


def test_descriptors_name_schema_operators_and_options():
    for name, descriptor in DESCRIPTORS.items():
        assert descriptor.code == builtin_codes()[name] == getattr(tflite.BuiltinOperator, name)
        assert hasattr(tflite.BuiltinOptions, descriptor.options_type), name


def test_descriptor_dtypes_are_the_kernel_markers_and_tflm_rows():
    for op, spec in kernel_catalogue().items():
        assert describe(op).dtypes == spec.dtypes
    assert describe("SVDF").tflm_dtypes == {"float32", "int8"}
    assert describe("SIGN").tflm_dtypes == frozenset()  # TFLM lacks it


def test_an_op_without_a_row_has_no_facts():
    descriptor = describe("CONV_3D_TRANSPOSE")
    assert descriptor.arena is None and descriptor.version("int8") == 1
    assert describe("SOFTMAX").options_type == "SoftmaxOptions"
    assert describe("RELU").options_type == "NONE"
