"""The model IR and its .tflite reader, writer, builder and lifetime analysis."""
