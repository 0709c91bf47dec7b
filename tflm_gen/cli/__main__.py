"""`python -m tflm_gen.cli`: the same as the `tflm-gen` script."""

from tflm_gen.cli import main

main()
