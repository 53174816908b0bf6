"""Type and shape inference by abstract interpretation (see `myia.infer.engine`)."""
