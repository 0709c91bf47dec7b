"""The scratch of a sparse 1x1 CONV_2D (kernels_c/conv_sparse.c), said once in Python
(compress_sparse_conv.scratch_bytes, which the arena model and the coder's offset limit
use): it equals what the C kernel computes, byte for byte (the runtime rounds requests to
8 bytes, so an arena comparison alone would miss an error of a few bytes)."""

from __future__ import annotations

import subprocess

from tests.conftest import need_tool
from tests.test_compress import _pointwise_model, sparse_everywhere  # noqa: F401
from tflm_gen import compress_sparse_conv
from tflm_gen.host import build_library, library_files
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model

PROBE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_sparse.h"

/* Arguments: input channels, output height, output width, ... ; prints each scratch. */
int main(int argc, char **argv) {
  int i;
  for (i = 1; i + 2 < argc; i += 3) {
    tflm_conv_params_t p;
    memset(&p, 0, sizeof p);
    p.input_c = atoi(argv[i]);
    p.output_h = atoi(argv[i + 1]);
    p.output_w = atoi(argv[i + 2]);
    printf("%lu\n", (unsigned long)tflm_conv_sparse_scratch_bytes(&p));
  }
  return 0;
}
"""
# (input channels, output height, output width): odd and even pixel counts, one pixel,
# person_detect's 3x3 and 6x6 maps, channel counts not a multiple of 8.
LAYERS = [(31, 2, 3), (33, 5, 7), (64, 1, 1), (13, 3, 3), (24, 6, 6), (1, 1, 1),
          (255, 3, 3), (128, 6, 6), (7, 1, 5)]


def test_the_python_scratch_of_a_sparse_convolution_is_the_kernels(
        sparse_everywhere, tmp_path):  # noqa: F811
    cc = need_tool("cc")
    device = device_model(_pointwise_model(), compress=True)[0]
    library = build_library(library_files(read_model(device), device, ()))
    (tmp_path / "probe.c").write_text(PROBE)
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    f"-I{library.parent}", "probe.c", str(library),
                    f"-Wl,-rpath,{library.parent}", "-o", "probe"], cwd=tmp_path, check=True)
    printed = subprocess.run([str(tmp_path / "probe"), *(str(n) for layer in LAYERS
                                                          for n in layer)],
                             capture_output=True, text=True, check=True).stdout.split()
    assert [int(n) for n in printed] == [
        compress_sparse_conv.scratch_bytes(channels, height * width)
        for channels, height, width in LAYERS]
