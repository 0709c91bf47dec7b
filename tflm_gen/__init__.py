"""tflm-gen: turn a .tflite model into a self-contained C project and prove it runs.

Python API (the same verbs as the CLI):
    files = tflm_gen.generate(model_bytes, GenerateOptions(target="make", name="kws"))
    outputs = tflm_gen.run(model_bytes, inputs)
    report = tflm_gen.verify(model_bytes, against="auto", runs=3)  # or "tflm", "litert"
"""

__version__ = "0.1.0"


def generate(model_bytes, options=None):
    """{relative path: bytes} of a project (see tflm_gen.project.generate)."""
    from tflm_gen.project import GenerateOptions
    from tflm_gen.project import generate as _generate

    return _generate(model_bytes, options or GenerateOptions())


def run(model_bytes, inputs, tags=()):
    """Outputs of one invoke on the host-compiled runtime (see tflm_gen.host.run_model)."""
    from tflm_gen.host import run_model

    return run_model(model_bytes, inputs, tags)


def verify(model_bytes, against="auto", runs=3, tags=(), samples=None, per_operator=False):
    """A VerifyReport comparing our runtime with the oracle (see tflm_gen.verify)."""
    from tflm_gen.verify import verify as _verify

    return _verify(model_bytes, against, runs, tags, samples, per_operator)
