"""keras.utils.get_file: a file downloaded once into Keras's cache, checked and extracted.

Ported from Keras 3.15 (keras/src/utils/file_utils.py; Apache License 2.0, Copyright The
Keras Authors): the same cache folder ($KERAS_HOME or ~/.keras, /tmp/.keras when that is not
writable, then cache_subdir, which may be absolute), the same file and extraction names
(`fname` with extract=True: <fname>_archive and <fname>/, or with an extension <fname> and
<stem>_extracted/; from the URL's last part otherwise), file_hash (sha256 for 64 hex digits,
else md5, or hash_algorithm) checked on the cached file (a mismatch downloads again) and on
the download (a mismatch is an error), force_download, and tar/zip extraction that skips
members leading outside the folder. Downloads go through urllib (http, https, ftp, file://)
with Keras's progress bar. A file nnfit.keras.datasets reads is where this puts it.
"""
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import warnings
import zipfile
from urllib.request import urlretrieve

from nnfit.keras._progbar import Progbar, print_msg


def keras_home():
    """Keras's cache folder: $KERAS_HOME, else ~/.keras (/tmp/.keras when ~ is not writable)."""
    if "KERAS_HOME" in os.environ:
        return os.environ["KERAS_HOME"]
    base = os.path.expanduser("~")
    if not os.access(base, os.W_OK):
        base = "/tmp"
    return os.path.join(base, ".keras")


def resolve_hasher(algorithm, file_hash=None):
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm == "auto" and file_hash is not None and len(file_hash) == 64:
        return hashlib.sha256()
    return hashlib.md5()


def hash_file(fpath, algorithm="sha256", chunk_size=65535):
    hasher = resolve_hasher(algorithm) if isinstance(algorithm, str) else algorithm
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto", chunk_size=65535):
    return str(hash_file(fpath, resolve_hasher(algorithm, file_hash), chunk_size)) == str(file_hash)


def _within(base_dir, relative_path):
    path = os.path.realpath(os.path.join(base_dir, relative_path))
    try:
        return path if os.path.commonpath([path, base_dir]) == base_dir else None
    except ValueError:
        return None


def _safe_members(members, base_dir, name_of, link_ok):
    for info in members:
        if link_ok(info) and _within(base_dir, name_of(info)) is not None:
            yield info
        else:
            warnings.warn(f"Skipping invalid path during archive extraction: '{name_of(info)}'.", stacklevel=2)


def _tar_link_ok(base_dir):
    def ok(info):
        if info.islnk():
            return _within(base_dir, info.linkname) is not None
        if info.issym():
            destination = _within(base_dir, info.name)
            if destination is None:
                return False
            link = os.path.realpath(os.path.join(os.path.dirname(destination), info.linkname))
            try:
                return os.path.commonpath([link, base_dir]) == base_dir
            except ValueError:
                return False
        return True
    return ok


def extract_archive(file_path, path=".", archive_format="auto"):
    """Extracts a tar (.tar, .tar.gz, .tar.bz) or zip archive into `path`; False when it is
    neither (of the formats asked for)."""
    if archive_format is None:
        return False
    if archive_format == "auto":
        archive_format = ["tar", "zip"]
    if isinstance(archive_format, str):
        archive_format = [archive_format]
    file_path, path = os.fspath(file_path), os.fspath(path)
    for archive_type in archive_format:
        if archive_type == "tar":
            open_fn, is_match_fn = tarfile.open, tarfile.is_tarfile
        elif archive_type == "zip":
            open_fn, is_match_fn = zipfile.ZipFile, zipfile.is_zipfile
        else:
            raise NotImplementedError(archive_type)
        if not is_match_fn(file_path):
            continue
        with open_fn(file_path) as archive:
            base = os.path.realpath(path)
            try:
                if isinstance(archive, zipfile.ZipFile):
                    archive.extractall(path, members=_safe_members(archive.infolist(), base, lambda i: i.filename,
                                                                   lambda i: True))
                else:
                    kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                    archive.extractall(path, members=_safe_members(archive, base, lambda i: i.name,
                                                                   _tar_link_ok(base)), **kwargs)
            except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
                if os.path.exists(path):
                    if os.path.isfile(path):
                        os.remove(path)
                    else:
                        shutil.rmtree(path)
                raise
        return True
    return False


class _DownloadProgress:
    """urlretrieve's report hook drawing Keras's Progbar."""

    def __init__(self):
        self.progbar = None
        self.finished = False

    def __call__(self, block_num, block_size, total_size):
        total_size = None if total_size == -1 else total_size
        if not self.progbar:
            self.progbar = Progbar(total_size)
        current = block_num * block_size
        if total_size is None:
            self.progbar.update(current)
        elif current < total_size:
            self.progbar.update(current)
        elif not self.finished:
            self.progbar.update(self.progbar.target)
            self.finished = True


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """Keras's get_file: the path of the cached file (of its extraction folder with extract)."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if cache_dir is None:
        cache_dir = keras_home()
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    datadir_base = os.path.expanduser(cache_dir)
    if not os.access(datadir_base, os.W_OK):
        datadir_base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")
    datadir = os.path.join(datadir_base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    provided_fname = fname
    fname = os.fspath(fname) if isinstance(fname, os.PathLike) else fname
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'.Please specify the "
                             "`fname` argument.")
    elif os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    if extract or untar:
        if provided_fname and "." in fname:
            download_target = os.path.join(datadir, fname)
            fname = fname[:fname.find(".")]
            extraction_dir = os.path.join(datadir, f"{fname}_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            download_target = os.path.join(datadir, f"{fname}_archive")
    else:
        download_target = os.path.join(datadir, fname)
    if force_download:
        download = True
    elif os.path.exists(download_target):
        download = False
        if file_hash is not None and not validate_file(download_target, file_hash, algorithm=hash_algorithm):
            print_msg(f"A local file was found, but it seems to be incomplete or outdated because the "
                      f"{hash_algorithm} file hash does not match the original value of {file_hash} so we will "
                      "re-download the data.")
            download = True
    else:
        download = True
    if download:
        print_msg(f"Downloading data from {origin}")
        error_msg = "URL fetch failure on {}: {} -- {}"
        try:
            try:
                urlretrieve(origin, download_target, _DownloadProgress())
            except urllib.error.HTTPError as e:
                raise Exception(error_msg.format(origin, e.code, e.msg)) from None
            except urllib.error.URLError as e:
                raise Exception(error_msg.format(origin, e.errno, e.reason)) from None
        except (Exception, KeyboardInterrupt):
            if os.path.exists(download_target):
                os.remove(download_target)
            raise
        if os.path.exists(download_target) and file_hash is not None and \
                not validate_file(download_target, file_hash, algorithm=hash_algorithm):
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not match "
                             f"the provided value of {file_hash}.")
    if extract or untar:
        if untar:
            archive_format = "tar"
        if not extract_archive(download_target, extraction_dir, archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return download_target
