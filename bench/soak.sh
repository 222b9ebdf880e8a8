#!/usr/bin/env bash
# Soak benchmark (issue 20): the convnet example with validation, TensorBoard logs and
# checkpoints for an hour (or --minutes N); RSS, the allocator's in-use bytes, open fds and
# threads per epoch must not grow. Details: bench/soak.py.
exec /usr/bin/python3 "$(dirname "$0")/soak.py" "$@"
