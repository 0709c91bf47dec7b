"""One exception type per kind of user error; the CLI prints one line and exits 2."""


class TflmGenError(Exception):
    """Base of every error a user can cause (bad model, bad input, missing tool)."""


class ModelError(TflmGenError):
    """The file is not a valid TFLite flatbuffer, or is internally inconsistent."""


class UnsupportedModelError(TflmGenError):
    """The model is valid but uses ops, dtypes or features tflm-gen cannot run."""


class InputError(TflmGenError):
    """An input array has the wrong shape or dtype, or an option is wrong."""


class ArenaError(TflmGenError):
    """The arena given to the runtime is too small or misaligned."""


class ToolchainError(TflmGenError):
    """A compiler or emulator that the job needs is missing or failed."""


class OutputDirError(TflmGenError):
    """The output directory holds entries tflm-gen did not write where it would write, is
    one it refuses (/, home), or cannot be written; likewise a single output file."""


class TargetFileError(TflmGenError):
    """A file of targets/ or targets/boards/ breaks its schema (tflm_gen/target_schema.py)."""
