"""tflm-gen: turn a .tflite model into a self-contained C project and prove it runs."""

__version__ = "0.1.0"
