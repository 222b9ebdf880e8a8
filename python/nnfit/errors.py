"""nnfit's exceptions beyond Python's own.

nnfit's error kinds reach Python as: a bad argument or config -> ValueError; a valid
Keras option nnfit does not implement -> NotImplementedError; memory -> OutOfMemoryError
(a MemoryError); unreadable or damaged files -> DataError (an OSError); a vendor library's
failure -> RuntimeError. The message is nnfit's, with its hint on the next line.
"""


class OutOfMemoryError(MemoryError):
    """A batch, model or allocation did not fit the memory limit.

    Attributes (when an allocator refused a request): ``device`` ("cpu:0"),
    ``request_bytes``, ``limit_bytes`` (0: no limit), ``in_use_bytes``, ``peak_bytes``.
    """

    device = None
    request_bytes = None
    limit_bytes = None
    in_use_bytes = None
    peak_bytes = None


class DataError(OSError):
    """A file or its data could not be read: ``filename`` and the byte ``offset`` where."""

    offset = None

    def __init__(self, message=""):
        super().__init__(message)
        self.strerror = message

    def __str__(self):
        # OSError's own would print "[Errno None] None: 'file'" once filename is set.
        return self.strerror or ""
