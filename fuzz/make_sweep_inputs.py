#!/usr/bin/env python3
"""Writes the hand-made hostile inputs of issue 20's mutation sweep into
tests/fuzz/regressions/<target>/sweep-* (committed), each with a .error file holding text
its error must contain (none: the input must load). nnfit_fuzz_tests replays them through
the fuzz targets. Inputs too large to commit (a CSV of 2 MB of commas) are made by the
unit tests instead. Run from the repository root: python3 fuzz/make_sweep_inputs.py
"""
import gzip
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_seeds import SEP, crc32c, example, field, masked, npy, record, varint  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz", "regressions")


def put(target, name, data, error=None):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("latin1"))
    if error is not None:
        with open(os.path.join(d, name + ".error"), "w") as f:
            f.write(error)


def raw_npy(header, payload=b""):
    header = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


# NPY: a shape whose product overflows 64 bits; header dicts with extra or repeated keys.
put("npy", "sweep-shape-overflow.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", b"\0" * 16), "more than 2^64")
put("npy", "sweep-extra-key.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1, }", b"\0" * 4), "unexpected key 'extra'")
put("npy", "sweep-repeated-key.npy", raw_npy("{'descr': '<f4', 'shape': (1,), 'fortran_order': False, 'shape': (2,), }", b"\0" * 8), "key 'shape' appears twice")
put("npy", "sweep-text-after-dict.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk", b"\0" * 4), "text after the header dict")
put("npy", "sweep-empty.npy", b"", "not a .npy file")


# NPZ: a ZIP64 extra field whose sizes or offset wrap 64-bit arithmetic.
def npz_zip64(name, body, usize, csize, offset, method=0):
    crc = zlib.crc32(body)
    z = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0x21, crc, len(body), len(body), len(name), 0) + name + body
    cd = len(z)
    extra = struct.pack("<HHQQQ", 1, 24, usize, csize, offset)
    c = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, method, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name),
                    len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + name + extra
    z += c
    return z + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(c), cd, 0)


member = npy("<f4", [1], b"\0\0\x80\x3f")
put("npz", "sweep-zip64-size-wraps.npz", npz_zip64(b"x.npy", member, 2**64 - 16, 2**64 - 16, 0), "is truncated")
put("npz", "sweep-zip64-offset-wraps.npz", npz_zip64(b"x.npy", member, len(member), len(member), 2**64 - 8), "bad local header")
put("npz", "sweep-zip64-deflate-bomb.npz", npz_zip64(b"x.npy", zlib.compress(member)[2:-4], 2**40, len(zlib.compress(member)[2:-4]), 0, 8),
    "more than deflate can expand to")
overflowing = raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (65536, 65536, 65536, 65536), }")
put("npz", "sweep-member-shape-overflow.npz", npz_zip64(b"x.npy", overflowing, len(overflowing), len(overflowing), 0), "more than 2^64")

# TFRecord: a length of 0xFFFFFFFF with a valid CRC; a GZIP stream cut between records.
n = struct.pack("<Q", 0xFFFFFFFF)
put("tfrecord", "sweep-length-ffffffff.tfrecord", n + struct.pack("<I", masked(n)) + b"only a few bytes", "truncated record")
recs = [record(example({"label": ("int", [i])})) for i in range(3)]
gz = zlib.compressobj(6, zlib.DEFLATED, 31)
cut = gz.compress(recs[0]) + gz.flush(zlib.Z_FULL_FLUSH) + gz.compress(recs[1]) + gz.flush(zlib.Z_FULL_FLUSH)
put("tfrecord", "sweep-truncated-between-records.tfrecord.gz", cut, "truncated compressed stream")
zz = zlib.compressobj(6, zlib.DEFLATED, 15)
put("tfrecord", "sweep-zlib-truncated-between-records.tfrecord.zz",
    zz.compress(recs[0]) + zz.flush(zlib.Z_FULL_FLUSH), "truncated compressed stream")
put("tfrecord", "sweep-empty.tfrecord", b"")

# tf.train.Example: a packed list whose length overflows, a key of 2^62 bytes.
put("example", "sweep-packed-length-overflow.pb",
    field(1, 2, field(1, 2, field(1, 2, b"k") + varint(2 << 3 | 2) + varint(2**62) + b"\0" * 8)), "runs past the end")
put("example", "sweep-key-length-2-62.pb", varint(1 << 3 | 2) + varint(2**62) + b"\0" * 8, "runs past the end")


# PNG: a header claiming 65500 x 65500 RGB pixels over a tiny IDAT.
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 65500, 65500, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
put("image", "sweep-png-65500x65500.png", png, "PNG header claims 65500 x 65500 pixels")
put("image", "sweep-empty.png", b"", "not a JPEG or PNG")
# JPEG: a real baseline JPEG whose frame header (SOF0) is enlarged to 65500 x 65500.
jpeg = bytearray(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "image", "rgb_12x16.jpg"), "rb").read())
sof = jpeg.index(b"\xff\xc0")
jpeg[sof + 5:sof + 9] = struct.pack(">HH", 65500, 65500)
put("image", "sweep-jpeg-65500x65500.jpg", bytes(jpeg), "JPEG header claims 65500 x 65500 pixels")
jpeg[sof + 5:sof + 9] = struct.pack(">HH", 40, 16)  # 12 rows of data, a frame of 40
put("image", "sweep-jpeg-enlarged-frame.jpg", bytes(jpeg), "undecodable JPEG")

# IDX: a gzip ratio bomb (a header claiming 10 GB over a few KB of zeros).
put("idx", "sweep-gzip-bomb.idx.gz", gzip.compress(bytes([0, 0, 8, 3]) + struct.pack(">III", 1, 100000, 100000) + b"\0" * 1000000, mtime=0),
    "more than a gzip file of")

# tfevents: a record length of 0xFFFFFFFF with a valid CRC.
put("tfevents", "sweep-length-ffffffff", n + struct.pack("<I", masked(n)) + b"short")

# Keras JSON: nested 100,000 deep; "10", {} and true as the batch entry of batch_shape.
put("keras_json", "sweep-nested-100000.json", "[" * 100000 + "]" * 100000, "nested more than 512 levels deep")
for name, entry in [("string", '"10"'), ("object", "{}"), ("true", "true")]:
    put("keras_json", "sweep-batch-shape-%s.json" % name,
        '{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": '
        '{"name": "in", "batch_shape": [%s, 4]}}, {"class_name": "Dense", "config": {"name": "d", "units": 2}}]}}' % entry,
        "must start with null or a positive batch size")
put("keras_json", "sweep-batch-shape-overflow.json",
    '{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": '
    '{"name": "in", "batch_shape": [null, 4294967296, 4294967296, 4]}}]}}', "product overflows 64 bits")

# The train config: null as epochs, a TFRecord feature whose shape overflows, deep nesting.
mlp = ('{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": '
       '{"name": "in", "batch_shape": [null, 4]}}, {"class_name": "Dense", "config": {"name": "d", "units": 2}}]}}')
put("train_config", "sweep-epochs-null.json",
    '{"model": %s, "data": {"train": {"images": "i.idx", "labels": "l.idx"}}, "compile": {"loss": "mse"}, "fit": {"epochs": null}}' % mlp,
    "fit.epochs: expected an integer >= 1, got null")
put("train_config", "sweep-feature-shape-overflow.json",
    '{"model": %s, "data": {"train": {"source": {"format": "tfrecord", "files": "a.tfrecord", "label": "y", "features": '
    '{"x": {"dtype": "float32", "shape": [4294967296, 4294967296]}, "y": {"dtype": "int64", "shape": []}}}}}, '
    '"compile": {"loss": "mse"}}' % mlp, "product overflows 64 bits")
put("train_config", "sweep-nested-100000.json", '{"model": ' + "[" * 100000 + "]" * 100000 + "}", "nested more than 512 levels deep")

# The profile log directory: huge step numbers; ops.json with wrong types or 100000 threads.
line = '{"step":%d,"input_wait_us":%d,"h2d_us":0,"forward_us":%d,"backward_us":1,"allreduce_us":0,"update_us":1,"callbacks_us":0,"memory_in_use_bytes":%d}\n'
huge = "".join(line % (s, w, f, m) for s, w, f, m in [(1, 5, 9, 1), (9223372036854775806, 9223372036854775807, 9223372036854775807, 9223372036854775807),
                                                     (9223372036854775807, 0, 0, 0)])
put("profile", "sweep-huge-step-numbers", huge, "is too large")
big = "".join(line % (s, w, f, m) for s, w, f, m in [(1, 5, 9, 1), (999999999999999999, 999999999999999, 999999999999999, 999999999999999999),
                                                    (1000000000000000000, 0, 0, 0)])
put("profile", "sweep-large-step-numbers", big)
steps = "".join(line % (s, 10, 100, 1000) for s in range(1, 5))
put("profile", "sweep-ops-wrong-types", steps + SEP.decode() + '{"threads": 1, "steps": 4, "ops": [{"name": 1, "op": "matmul", "phase": "forward", "seconds": "x", "flops": 1}]}',
    "ops[0].name: expected a string")
put("profile", "sweep-ops-threads-100000", steps + SEP.decode() + '{"threads": 100000, "steps": 4, "ops": []}', "threads: expected at most 4096")
put("profile", "sweep-pipeline-wrong-types", steps.replace('"input_wait_us":10', '"input_wait_us":100000') + SEP.decode() +
    '{"threads": 1, "steps": 4, "ops": []}' + SEP.decode() +
    '{"stages": [{"name": ["x"], "next_seconds": {}}]}', "stages[0].name: expected a string")

# The doctor's root: a 100,000-digit version macro, a number past int in a header.
put("doctor_root", "sweep-100000-digit-macro", SEP.decode() * 3 + "#define CUDA_VERSION " + "9" * 100000 + "\n" + SEP.decode() +
    "#define CUDNN_MAJOR 99999999999999999999\n#define CUDNN_MINOR 1\n")
put("doctor_root", "sweep-dpkg-huge-numbers", SEP.decode() * 16 + "#define CUDNN_MAJOR 8\n" + SEP.decode() +
    "Package: libcudnn" + "8" * 100000 + "-dev\nStatus: install ok installed\nVersion: 1+cuda" + "1" * 100000 + "\n\n"
    "Package: libcudnn8-dev\nStatus: install ok installed\nVersion: " + "9" * 100000 + "+cuda12\n")

# CSV: a Latin-1 header (the reader takes bytes; `data inspect` prints them as U+FFFD).
put("csv", "sweep-non-utf8.csv", b"caf\xe9,x\n1,2\n")

# Pipeline maps: resize sizes whose product overflows, one_hot of depth 1e9.
for name, stage, error in [("resize-overflow", '{"map": "resize", "height": 4294967296, "width": 4294967296}', "pixels"),
                           ("one-hot-depth-1e9", '{"map": "one_hot", "depth": 1000000000}', "expected a depth of at most 16777216")]:
    put("train_config", "sweep-%s.json" % name,
        '{"model": %s, "data": {"train": {"source": {"format": "npy", "x": "x.npy", "y": "y.npy"}, "pipeline": [%s]}}, '
        '"compile": {"loss": "mse"}}' % (mlp, stage), error)

# steps.jsonl: values just under 2^63, whose sum over a step's parts overflowed.
near = 9223372036854775799
put("profile", "sweep-step-sums-overflow", "".join(line % r for r in [(1, near, near, near), (2, 1, 1, 1), (3, 1, 1, 1)]),
    "is too large (more than 2^60)")
