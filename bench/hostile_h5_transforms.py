"""HDF5 files that reach outside themselves or lie about their data, for bench/hostile_sweep.py
(issue 39). Run by a Python with h5py (the sweep finds one in a venv):

    python hostile_h5_transforms.py CLEAN.h5 OUTDIR FIFO OTHER.h5

writes OUTDIR/<name>.h5 for each transform of one weight dataset of CLEAN.h5 and prints one
JSON line per file: {"name", "path", "damaged"} (damaged as in hostile_cases.py: True must be
refused, False is a valid file nnfit must load with the clean file's predictions, None may load).
"""
import json
import os
import shutil
import sys

import h5py
import numpy as np


def datasets(f):
    found = []
    f.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset) and obj.ndim >= 1 else None)
    return found


def replace(f, name, make):
    """Dataset `name` removed and made again by make(group, leaf, old_values, old_attrs)."""
    d = f[name]
    values, attrs = d[()], dict(d.attrs)
    group, leaf = f[os.path.dirname(name) or "/"], os.path.basename(name)
    del group[leaf]
    make(group, leaf, values, attrs)


def custom_float(exponent_bits, mantissa_bits):
    """A 32-bit float type HDF5 takes whose fields are not IEEE's."""
    t = h5py.h5t.IEEE_F32LE.copy()
    t.set_fields(31, mantissa_bits, exponent_bits, 0, mantissa_bits)
    t.set_ebias(2 ** (exponent_bits - 1) - 1)
    return t


def transforms(fifo, other, outdir):
    big = os.path.join(outdir, "outside-values.bin")
    return {
        # Links and storage outside the file: refused whatever they point at.
        "external-link-to-fifo": (True, lambda g, n, v, a: g.__setitem__(n, h5py.ExternalLink(fifo, "/x"))),
        "external-link-to-file": (True, lambda g, n, v, a: g.__setitem__(n, h5py.ExternalLink(other, "/" + n))),
        "external-link-to-dev-zero": (True, lambda g, n, v, a: g.__setitem__(n, h5py.ExternalLink("/dev/zero", "/x"))),
        "soft-link-dangling": (True, lambda g, n, v, a: g.__setitem__(n, h5py.SoftLink("/nowhere/" + n))),
        "external-storage": (True, lambda g, n, v, a: (v.astype(v.dtype).tofile(big),
                                                       g.create_dataset(n, shape=v.shape, dtype=v.dtype,
                                                                        external=[(big, 0, v.nbytes)]))),
        "virtual-dataset": (True, lambda g, n, v, a: g.create_virtual_dataset(n, _layout(v, other))),
        # Types: a float whose fields are not IEEE's is refused; wider or narrower IEEE types
        # and big-endian bytes are Keras's too (h5py converts), so they may load.
        "float-7-bit-exponent": (True, lambda g, n, v, a: _typed(g, n, v, custom_float(7, 24))),
        "float64": (None, lambda g, n, v, a: g.create_dataset(n, data=v.astype("<f8"))),
        "float16": (None, lambda g, n, v, a: g.create_dataset(n, data=v.astype("<f2"))),
        "big-endian": (None, lambda g, n, v, a: g.create_dataset(n, data=v.astype(">f4"))),
        "int32": (None, lambda g, n, v, a: g.create_dataset(n, data=v.astype("<i4"))),
        "strings": (True, lambda g, n, v, a: g.create_dataset(n, data=np.array([b"x"] * v.size).reshape(v.shape))),
        "compound": (True, lambda g, n, v, a: g.create_dataset(n, data=np.zeros(v.shape, [("a", "<f4"),
                                                                                           ("b", "<f4")]))),
        # Storage that is valid HDF5: loads with the clean predictions, or is refused by name.
        "gzip": (False, lambda g, n, v, a: g.create_dataset(n, data=v, compression="gzip", chunks=True)),
        "shuffle-fletcher32": (False, lambda g, n, v, a: g.create_dataset(n, data=v, shuffle=True, fletcher32=True,
                                                                          chunks=True)),
        "lzf-filter": (None, lambda g, n, v, a: g.create_dataset(n, data=v, compression="lzf", chunks=True)),
        "scaleoffset": (None, lambda g, n, v, a: g.create_dataset(n, data=v, scaleoffset=3, chunks=True)),
        "chunks-of-one": (False, lambda g, n, v, a: g.create_dataset(n, data=v, chunks=tuple(1 for _ in v.shape))),
        # Shapes that lie: declared huge but unwritten (a tiny file), transposed, scalar.
        "declared-4GiB-unwritten": (True, lambda g, n, v, a: g.create_dataset(n, shape=(1 << 20, 1 << 10), dtype="<f4",
                                                                             chunks=(1, 1 << 10))),
        "declared-2^62-unwritten": (True, lambda g, n, v, a: g.create_dataset(n, shape=(1 << 31, 1 << 31), dtype="<f4",
                                                                             chunks=(1, 1 << 10))),
        "transposed": (None, lambda g, n, v, a: g.create_dataset(n, data=np.ascontiguousarray(v.T)) if v.ndim > 1
                       else g.create_dataset(n, data=np.concatenate([v, v]))),
        "scalar": (True, lambda g, n, v, a: g.create_dataset(n, data=np.float32(1))),
        "empty": (True, lambda g, n, v, a: g.create_dataset(n, shape=(0,), dtype="<f4")),
        "nan-values": (None, lambda g, n, v, a: g.create_dataset(n, data=np.full(v.shape, np.nan, "<f4"))),
    }


def _typed(g, name, values, tid):
    space = h5py.h5s.create_simple(values.shape)
    d = h5py.h5d.create(g.id, name.encode(), tid, space)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(values, "<f4"), mtype=h5py.h5t.IEEE_F32LE)


def _layout(values, other):
    layout = h5py.VirtualLayout(shape=values.shape, dtype=values.dtype)
    layout[...] = h5py.VirtualSource(other, "/does-not-matter", shape=values.shape)
    return layout


def group_transforms():
    return {
        "group-cycle": (None, lambda f: f["/"].__setitem__("loop", f["/"])),
        "10000-empty-groups": (None, lambda f: [f.create_group(f"g{i}") for i in range(10000)]),
        "10MB-attribute": (None, lambda f: f.attrs.__setitem__("big", "x" * (10 << 20))),
    }


def main():
    clean, outdir, fifo, other = sys.argv[1:5]
    os.makedirs(outdir, exist_ok=True)
    with h5py.File(clean, "r") as f:
        names = datasets(f)
    target = max(names, key=lambda n: h5py.File(clean, "r")[n].size)
    for name, (damaged, make) in transforms(fifo, other, outdir).items():
        path = os.path.join(outdir, name + ".h5")
        shutil.copy(clean, path)
        try:
            with h5py.File(path, "r+") as f:
                replace(f, target, make)
        except Exception as e:  # a transform this h5py cannot write: skipped, said why
            print(json.dumps({"name": name, "skipped": f"{type(e).__name__}: {e}"}))
            continue
        print(json.dumps({"name": name, "path": path, "damaged": damaged, "dataset": target}))
    for name, (damaged, make) in group_transforms().items():
        path = os.path.join(outdir, name + ".h5")
        shutil.copy(clean, path)
        with h5py.File(path, "r+") as f:
            make(f)
        print(json.dumps({"name": name, "path": path, "damaged": damaged, "dataset": "/"}))


if __name__ == "__main__":
    main()
