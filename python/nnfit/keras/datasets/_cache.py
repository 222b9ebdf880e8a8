"""Where Keras's keras.utils.get_file keeps a dataset, and reading it without a network.

Ported from Keras 3.15 (keras/src/utils/file_utils.py, keras/src/backend/config.py,
keras/src/datasets/npz_utils.py; Apache License 2.0, Copyright The Keras Authors): the
same cache folder (``$KERAS_HOME`` or ``~/.keras``, ``/tmp/.keras`` when not writable, then
``datasets``), file names and extraction folders, so a file Keras downloaded is found where
Keras left it. nnfit never downloads: a missing file is a FileNotFoundError naming the path
and the URL to put there. The file's hash is not checked (Keras would download again a file
whose hash differs; nnfit reads the file it is given).
"""
import errno
import io
import os
import pickle
import tarfile
import tempfile
import zipfile

import numpy as np

from nnfit.keras._file_utils import keras_home  # noqa: F401  (Keras's cache folder, get_file's too)

ORIGIN_FOLDER = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def _datadir(cache_subdir):
    base = os.path.expanduser(keras_home())
    # Keras makes its folder when imported; one missing here is where Keras would put it.
    if not os.access(base if os.path.exists(base) else os.path.dirname(os.path.abspath(base)), os.W_OK):
        # as get_file: an unwritable cache falls back to /tmp
        base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")
    return os.path.join(base, cache_subdir)


def _check_fname(fname):
    fname = os.fspath(fname)
    if os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    return fname


def _missing(what, path, origin, hint=""):
    return FileNotFoundError(
        errno.ENOENT,
        f"{what}: the file is not there, and nnfit does not download (it reads Keras's cache only). "
        f"Download {origin} to {path} (curl -L -o {path} {origin}), or run the same load_data once "
        f"under Keras, which puts it there; KERAS_HOME moves the cache folder.{hint} Expected", path)


def get_file(what, fname, origin, cache_subdir="datasets", hint=""):
    """The path keras.utils.get_file(fname, origin, cache_subdir=...) returns for a file
    already downloaded; FileNotFoundError naming the path and `origin` otherwise."""
    path = os.path.join(_datadir(cache_subdir), _check_fname(fname))
    if not os.path.isfile(path):
        raise _missing(what, path, origin, hint)
    return path


def get_extracted(what, fname, origin, member, legacy=None):
    """The folder keras.utils.get_file(fname, origin, extract=True) returns: Keras 3 keeps
    the archive as ``<fname>_archive`` and extracts it into ``<fname>/``. An archive not yet
    extracted is extracted as Keras does; a Keras 2 cache (``legacy``: the extracted
    folder directly under datasets/) is read too. `member` is the folder inside the archive."""
    datadir = _datadir("datasets")
    fname = _check_fname(fname)
    extraction_dir = os.path.join(datadir, fname)
    archive = os.path.join(datadir, f"{fname}_archive")
    if os.path.isdir(os.path.join(extraction_dir, member)):
        return extraction_dir
    if os.path.isfile(archive):
        _extract(archive, extraction_dir)
        return extraction_dir
    if legacy and os.path.isdir(os.path.join(datadir, legacy)):
        return datadir
    raise _missing(what, archive, origin, f" Keras extracts it into {os.path.join(extraction_dir, member)}"
                                           f"{os.sep}; that folder, if you have it, works as well.")


def _extract(archive, dest):
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(dest, filter="data")
            else:
                t.extractall(dest)
    elif zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            z.extractall(dest)
    else:
        raise ValueError(f"{archive}: neither a tar nor a zip archive; download it again")


_ALLOWED_PICKLE_GLOBALS = frozenset({("numpy", "ndarray"), ("numpy", "dtype"),
                                     ("numpy.core.multiarray", "_reconstruct"),
                                     ("numpy._core.multiarray", "_reconstruct")})


class RestrictedUnpickler(pickle.Unpickler):
    """Keras's: unpickles NumPy arrays only."""

    def find_class(self, module, name):
        if (module, name) in _ALLOWED_PICKLE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"Refusing to deserialize `{module}.{name}` while loading a Keras dataset. "
                                     "The file may be corrupted or malicious.")


def _load_npy_member(fp):
    try:
        return np.lib.format.read_array(fp, allow_pickle=False)
    except ValueError:  # an object array (ragged sequences): arrays only
        fp.seek(0)
        version = np.lib.format.read_magic(fp)
        if version[0] == 1:
            np.lib.format.read_array_header_1_0(fp)
        elif version[0] in (2, 3):
            np.lib.format.read_array_header_2_0(fp)
        else:
            raise ValueError(f"Unsupported `.npy` file version: {version}.")
        return RestrictedUnpickler(fp).load()


def load_npz(path):
    """Keras's npz_utils.load_npz: every member array, object arrays unpickled safely."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if member.endswith(".npy"):
                with archive.open(member) as raw:
                    arrays[member[:-len(".npy")]] = _load_npy_member(io.BytesIO(raw.read()))
    return arrays


def require(arrays, path, keys):
    """`arrays[k]` for each key, or a ValueError naming the file and the missing key."""
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise ValueError(f"{path}: no array {missing[0]!r} (the file holds {sorted(arrays)}); "
                         "it is not Keras's file: delete it and download it again")
    return [arrays[k] for k in keys]


def remove_long_seq(maxlen, seq, label):
    """Keras's python_utils.remove_long_seq: keeps sequences shorter than maxlen."""
    new_seq, new_label = [], []
    for x, y in zip(seq, label):
        if len(x) < maxlen:
            new_seq.append(x)
            new_label.append(y)
    return new_seq, new_label
