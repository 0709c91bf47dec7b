"""Lossless weight compression for the device model (issue 15, --compress).  Work in
progress: codecs, block index and the C decoder land in the next commits."""
