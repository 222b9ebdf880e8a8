"""Members of a .keras zip read in Python under the engine's limits (issue 39).

load_model looks at config.json in Python before the engine opens the file (preprocessing
prefixes, Keras's subclassed layers, custom losses), and reads the prefix layers' assets.
Python's zipfile trusts the sizes a file states and blocks on a FIFO, so a path that is not
a regular file, or a member past its cap or past deflate's ratio, is never read here: the
caller then lets the engine open the file, which refuses it naming the path or the member
(Note [Zip member sizes] in include/nnfit/io/zip_archive.h).
"""
import json
import os
import stat
import zipfile

# The engine's cap on config.json (kMaxConfigJsonBytes in src/model/keras/keras_saving.cpp).
MAX_CONFIG_BYTES = 64 << 20
# Deflate's largest ratio (io::ZipArchive::kMaxZipRatio): a member claiming more is damaged.
_MAX_RATIO = 1032


def is_regular_file(path):
    """Whether `path` (after symlinks) is a regular file: FIFOs block open() and devices
    never end, so nothing else is opened here."""
    try:
        return stat.S_ISREG(os.stat(str(path)).st_mode)
    except (OSError, ValueError):
        return False


def read_member(z, name, cap):
    """The member's bytes, or None when it is missing, claims more than `cap` bytes or more
    than deflate can expand its compressed bytes to, or inflates past what it claims."""
    try:
        info = z.getinfo(name)
    except KeyError:
        return None
    if info.file_size > cap or info.file_size > _MAX_RATIO * info.compress_size + 64:
        return None
    try:
        with z.open(info) as f:
            data = f.read(info.file_size + 1)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError):
        return None
    return data if len(data) == info.file_size else None


def file_config(path):
    """A .keras file's config.json as a dict, or None for anything else (a file that is not
    a zip, a special file, a config.json past the cap or not JSON): the engine says why."""
    if not is_regular_file(path):
        return None
    try:
        with zipfile.ZipFile(str(path)) as z:
            data = read_member(z, "config.json", MAX_CONFIG_BYTES)
        config = json.loads(data) if data is not None else None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, RecursionError):
        return None
    return config if isinstance(config, dict) else None
