#!/usr/bin/env python3
"""Writes the small hand-made seed inputs of nnfit's fuzz targets into fuzz/seeds/<target>/
(committed; scripts/fuzz.sh adds the real files of ../shared/formats/samples and the test
fixtures). Python's standard library only, so the bytes are written as the formats' notes
(../shared/formats) describe them, independently of nnfit's writers. Image seeds are not
made here (no JPEG encoder in the standard library): fuzz/seeds/image holds small JPEGs
and PNGs written by nnfit's io::write_jpeg and io::write_png. Run from the repository
root: python3 fuzz/make_seeds.py
"""
import gzip
import io
import json
import os
import struct
import zipfile
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
SEP = b"\n--nnfit-fuzz-file--\n"  # fuzz_input.h, Note [Multi-file inputs]


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# IDX: {0, 0, type, ndims}, big-endian uint32 dims, big-endian elements.
def idx(code, fmt, dims, values):
    head = bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims)
    return head + b"".join(struct.pack(">" + fmt, v) for v in values)


images = idx(0x08, "B", [3, 4, 4], [i * 5 % 256 for i in range(48)])
put("idx", "images_u8.idx", images)
put("idx", "images_u8.idx.gz", gzip.compress(images, mtime=0))
put("idx", "labels_u8.idx", idx(0x08, "B", [5], [1, 0, 4, 9, 2]))
put("idx", "f32.idx", idx(0x0D, "f", [2, 3], [0.5, -1, 2, 3.25, 1e-3, 7]))
put("idx", "f64.idx", idx(0x0E, "d", [4], [0.5, -1, 2, 1e300]))
put("idx", "i16.idx", idx(0x0B, "h", [2, 2], [-5, 300, 7, -32768]))
put("idx", "i32.idx.gz", gzip.compress(idx(0x0C, "i", [3], [-1, 2**31 - 1, 0]), mtime=0))
put("idx", "i8.idx", idx(0x09, "b", [3], [-128, 0, 127]))


# NPY: magic, version, little-endian header length, the header dict padded to 64 bytes.
def npy(descr, shape, payload, fortran=False, version=1):
    shape_s = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_s)
    lenb = 2 if version == 1 else 4
    total = (6 + 2 + lenb + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - 6 - 2 - lenb - len(header) - 1) + "\n"
    out = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H" if version == 1 else "<I", len(header))
    return out + header.encode("latin1") + payload


npys = {
    "f4_2x3.npy": npy("<f4", [2, 3], struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
    "f8_fortran.npy": npy("<f8", [2, 2], struct.pack("<4d", 1, 2, 3, 4), fortran=True),
    "i8_be.npy": npy(">i8", [3], struct.pack(">3q", -1, 0, 2**40)),
    "u1_scalar.npy": npy("|u1", [], b"\x07"),
    "b1.npy": npy("|b1", [4], b"\x00\x01\x01\x00"),
    "f2_v2.npy": npy("<f2", [2], struct.pack("<2e", 0.5, -2), version=2),
    "i2_empty.npy": npy("<i2", [0, 3], b""),
    "u4_v3.npy": npy("<u4", [1, 1, 2], struct.pack("<2I", 1, 2**32 - 1), version=3),
}
for name, data in npys.items():
    put("npy", name, data)


def npz(members, compress):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            z.writestr(info, data)
    return buf.getvalue()


members = [("x.npy", npys["f4_2x3.npy"]), ("y.npy", npy("<i8", [2], struct.pack("<2q", 0, 1)))]
put("npz", "savez.npz", npz(members, False))
put("npz", "savez_compressed.npz", npz(members, True))
put("npz", "one_member.npz", npz([("arr_0.npy", npys["b1.npy"])], True))

put("csv", "typed.csv", "x0,x1,label,flag\n0.5,1,3,true\n-2.25,7,0,false\n1e-3,8,1,true\n")
put("csv", "quoted_crlf.csv", 'a,"b, quoted",c\r\n1,"2",3\r\n4,"5",6\r\n')
put("csv", "text_column.csv", "name,value\nalpha,1.5\n\"be\"\"ta\",2\n")
put("csv", "ints.csv", "id,count\n1,9223372036854775807\n2,-9223372036854775808\n")
put("csv", "header_only.csv", "a,b,c\n")


# TFRecord framing: uint64 length, masked CRC-32C of it, data, masked CRC-32C of the data.
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked(n)) + data + struct.pack("<I", masked(data))


# tf.train.Example by hand (example.h gives the schema).
def varint(v):
    out = b""
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, wire, payload):
    return varint(num << 3 | wire) + (varint(len(payload)) + payload if wire == 2 else payload)


def feature(kind, values):
    if kind == "bytes":
        inner = b"".join(field(1, 2, v) for v in values)
        return field(1, 2, inner)
    if kind == "float":
        return field(2, 2, field(1, 2, b"".join(struct.pack("<f", v) for v in values)))
    return field(3, 2, field(1, 2, b"".join(varint(v) for v in values)))


def example(features):
    entries = b"".join(field(1, 2, field(1, 2, k.encode()) + field(2, 2, feature(*f))) for k, f in features.items())
    return field(1, 2, entries)


examples = [
    example({"image": ("float", [0.5, -1.0, 3.0]), "label": ("int", [i]), "name": ("bytes", [b"item-%d" % i])})
    for i in range(3)
]
for i, ex in enumerate(examples):
    put("example", "example_%d.pb" % i, ex)
put("example", "unpacked_and_unknown.pb", field(1, 2, field(1, 2, field(1, 2, b"k") + field(2, 2, field(3, 2, field(1, 0, varint(-5)))))) + field(9, 0, varint(3)))
stream = b"".join(record(ex) for ex in examples)
put("tfrecord", "examples.tfrecord", stream)
put("tfrecord", "examples.tfrecord.gz", gzip.compress(stream, mtime=0))
put("tfrecord", "examples.tfrecord.zz", zlib.compress(stream))
put("tfrecord", "raw_and_empty.tfrecord", record(b"") + record(b"raw bytes, not an Example"))


# tfevents: TFRecord framing of Event protos (wall_time = 1, step = 2, file_version = 3,
# summary = 5 { value = 1 { tag = 1, simple_value = 2 } }).
def event(wall, step=None, version=None, scalars=()):
    out = field(1, 1, struct.pack("<d", wall))
    if step is not None:
        out += field(2, 0, varint(step))
    if version is not None:
        out += field(3, 2, version.encode())
    if scalars:
        out += field(5, 2, b"".join(field(1, 2, field(1, 2, t.encode()) + field(2, 5, struct.pack("<f", v))) for t, v in scalars))
    return out


events = record(event(1.5e9, version="brain.Event:2"))
events += b"".join(record(event(1.5e9 + s, step=s, scalars=[("epoch_loss", 1.0 / (s + 1)), ("epoch_accuracy", 0.5)])) for s in range(3))
put("tfevents", "events.out.tfevents.1.nnfit", events)
put("tfevents", "events.out.tfevents.2.truncated", events[:-7])

# A log directory (profile target): steps.jsonl, ops.json, pipeline.json, train/ events.
keys = ["step", "input_wait_us", "h2d_us", "forward_us", "backward_us", "allreduce_us", "update_us", "callbacks_us",
        "memory_in_use_bytes"]
steps = "".join(json.dumps(dict(zip(keys, [s, w, 0, 900, 1800, 0, 300, 5, 1 << 20])), separators=(",", ":")) + "\n"
                for s, w in [(1, 5000), (2, 40), (3, 35), (4, 2500)])
ops = json.dumps({"threads": 2, "device": "cpu:0", "steps": 4, "ops": [
    {"name": "dense/matmul", "op": "matmul", "impl": "onednn", "phase": "forward", "calls": 4, "seconds": 0.0004,
     "flops": 4e7, "bytes": 2e6},
    {"name": "dense/kernel/adam", "op": "adam_update", "impl": "ref", "phase": "update", "calls": 4, "seconds": 0.0009,
     "flops": 0, "bytes": 5619712}]})
pipeline = json.dumps({"epochs": 2, "stages": [
    {"name": "source: idx", "elements": 120, "next_seconds": 0.01},
    {"name": "map(normalize)", "elements": 120, "next_seconds": 0.03},
    {"name": "batch", "elements": 4, "next_seconds": 0.031}]})
put("profile", "compute_bound", SEP.join([steps.encode(), ops.encode(), pipeline.encode(), events]))
input_steps = steps.replace('"input_wait_us":40', '"input_wait_us":90000')
put("profile", "input_bound", SEP.join([input_steps.encode(), b"", pipeline.encode()]))
put("profile", "steps_only", steps)

# A doctor root (doctor_target.cpp's kDoctorFiles, in order).
doctor = [
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Wed Aug 23 08:00:00 UTC 2023\nGCC version:  gcc 11.4.0\n",
    "Model: \t\t NVIDIA A100-SXM4-40GB\nIRQ:   \t\t 130\nGPU UUID: \t GPU-1234\nBus Location: \t 0000:01:00.0\n",
    '{\n  "cuda" : { "name" : "CUDA SDK", "version" : "12.2.2" },\n  "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "12.2.140" }\n}\n',
    "#define CUDA_VERSION 12020\n",
    "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 2\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n",
    "#define CUBLAS_VER_MAJOR 12\n#define CUBLAS_VER_MINOR 2\n#define CUBLAS_VER_PATCH 5\n",
    "#define NCCL_MAJOR 2\n#define NCCL_MINOR 18\n#define NCCL_PATCH 5\n",
    '#define OPEN_MPI 1\n#define OMPI_MAJOR_VERSION 4\n#define OMPI_MINOR_VERSION 1\n#define OMPI_RELEASE_VERSION 4\n#define MPI_VERSION 3\n',
    "#define DNNL_VERSION_MAJOR 3\n#define DNNL_VERSION_MINOR 4\n#define DNNL_VERSION_PATCH 1\n",
    "/usr/local/cuda-12.2/lib64\n",
    "home = /usr/bin\nversion = 3.11.4\n",
    "Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.15.0\n",
    "build_info = {'cuda_version': '12.2', 'cudnn_version': '8', 'is_cuda_build': True, 'cuda_compute_capabilities': ['sm_80', 'compute_90']}\n",
    "__version__ = '2.1.0+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\nhip: Optional[str] = None\n",
    '{"name": "pytorch", "version": "2.1.0", "build": "py3.11_cuda12.1_cudnn8.9.2_0", "depends": ["pytorch-cuda 12.1.*"]}',
    "CUDA Version 12.2.140\n",
    "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 2\n",
    "Package: libcudnn8-dev\nStatus: install ok installed\nVersion: 8.9.2.26-1+cuda12.1\n\n"
    "Package: libcudnn9-dev-cuda-12\nStatus: install ok installed\nVersion: 9.1.0.70-1\n",
    "Metadata-Version: 2.1\nName: nvidia-cuda-runtime-cu12\nVersion: 12.2.140\n",
]
put("doctor_root", "machine", SEP.join(d.encode() for d in doctor))
put("doctor_root", "driver_only", doctor[0])

# Train configs with each pipeline source and every stage kind.
model = {"class_name": "Sequential", "config": {"name": "mlp", "layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [None, 28, 28], "name": "input"}},
    {"class_name": "Flatten", "config": {"name": "flatten"}},
    {"class_name": "Dense", "config": {"name": "dense", "units": 10, "activation": "softmax"}}]}}
stages = [{"cache": ""}, {"shuffle": 100, "seed": 3}, {"map": "normalize", "scale": 0.0039, "num_parallel_calls": "AUTOTUNE"},
          {"batch": 32, "drop_remainder": True}, {"unbatch": True}, {"batch": True}, {"map": "one_hot", "depth": 10},
          {"repeat": 2}, {"take": 10}, {"skip": 1}, {"shard": 2, "index": 0}, {"ignore_errors": True},
          {"prefetch": "AUTOTUNE"}]
sources = {
    "idx": {"format": "idx", "images": "${FASHION_MNIST_DIR}/train-images-idx3-ubyte.gz", "labels": "labels.idx"},
    "npy": {"format": "npy", "x": "x.npy", "y": "y.npy", "sample_weight": "w.npy"},
    "npz": {"format": "npz", "path": "data.npz", "x": "x", "y": "y"},
    "csv": {"format": "csv", "path": "table.csv", "label": "label", "features": ["a", "b"]},
    "tfrecord": {"format": "tfrecord", "files": ["a.tfrecord", "b-*.tfrecord"], "compression": "GZIP",
                 "features": {"image": {"dtype": "float32", "shape": [28, 28]}, "label": {"dtype": "int64", "shape": [], "default": 0}},
                 "label": "label"},
    "image_folder": {"format": "image_folder", "directory": "images", "channels": 3},
}
for name, src in sources.items():
    cfg = {"model": model, "data": {"train": {"source": src, "pipeline": stages},
                                    "validation": {"images": "v-images.idx", "labels": "v-labels.idx"}},
           "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}},
                       "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
           "fit": {"epochs": 2, "batch_size": 16, "shuffle": True, "seed": 1, "memory": {"limit": "1GiB", "preallocate": "50%"},
                   "on_oom": "reduce_batch", "class_weight": {"0": 1.0, "1": 2.0},
                   "callbacks": [{"class_name": "EarlyStopping", "config": {"monitor": "val_loss", "patience": 2}}]}}
    put("train_config", "pipeline_%s.json" % name, json.dumps(cfg, indent=1))
put("train_config", "resize_crop.json", json.dumps({"model": model, "data": {"train": {"source": sources["image_folder"], "pipeline": [
    {"map": "resize", "height": 32, "width": 32, "method": "nearest"}, {"map": "random_crop", "height": 28, "width": 28},
    {"map": "random_flip_left_right"}, {"map": "random_brightness", "max_delta": 0.2}, {"map": "random_contrast"},
    {"map": "cast", "dtype": "float32"}, {"map": "convert_image_dtype", "dtype": "float32"},
    {"map": "reshape", "shape": [28, 28, 3]}, {"map": "normalize", "mean": [0.5, 0.5, 0.5], "stddev": [0.2, 0.2, 0.2]}]}},
    "compile": {"loss": "mse"}}))
