"""The inputs of bench/hostile_sweep.py (issue 39): mutated .keras and legacy .h5 files,
damaged backups, mutated train configs, special files as paths and bad nnfit.keras calls.

Every case is made from (seed, index) alone, so `hostile_sweep.py --only INDEX` remakes the
same bytes. A case says what a correct nnfit does with it (`damaged`):
  True    the input must be refused (a truncated file, a link outside the file, a FIFO);
  "same"  damage nnfit must detect or that cannot matter: accepted only with the clean
          file's predictions (a flipped byte in a zip, whose CRC covers it; an HDF5 header);
  None    may load (a changed weight value, a config value that is still a valid model).
Standard library only (the sweep runs anywhere the CLI does); HDF5 structure (links,
external storage, virtual datasets, datatypes) comes from hostile_h5_transforms.py, run by
an h5py found in a venv when there is one.
"""
import json
import os
import struct
import zipfile

# Field offsets (name, offset, width) in a zip's local header, central header and end record.
LOCAL = [("flags", 6, 2), ("method", 8, 2), ("time", 10, 2), ("crc", 14, 4), ("csize", 18, 4), ("usize", 22, 4),
         ("name_len", 26, 2), ("extra_len", 28, 2)]
CENTRAL = [("flags", 8, 2), ("method", 10, 2), ("crc", 16, 4), ("csize", 20, 4), ("usize", 24, 4), ("name_len", 28, 2),
           ("extra_len", 30, 2), ("comment_len", 32, 2), ("disk", 34, 2), ("ext_attr", 38, 4), ("offset", 42, 4)]
EOCD = [("disk", 4, 2), ("cd_disk", 6, 2), ("entries_here", 8, 2), ("entries", 10, 2), ("cd_size", 12, 4),
        ("cd_offset", 16, 4), ("comment_len", 20, 2)]
VALUES_16 = [0, 1, 8, 12, 14, 99, 0xFFFF, 0x8000, 0x0001, 0x0009, 0x0041]
VALUES_32 = [0, 1, 0x7FFFFFFF, 0x80000000, 0xC0000000, 0xFFFFFFFF, 0xFFFFFFFE, 1 << 24, 1 << 30]
# Values a config key may be given by an attacker or a typo.
HOSTILE_VALUES = [0, -1, 1, 2, -8, 2**31, 2**31 - 1, 2**32, 2**32 + 1, 2**53 + 1, 2**63, 2**64, 10**6, 10**9, 1.5, -0.5,
                  1e308, -1e308, 1e-320, "", "x", "nan", "inf", "-1", "32", "relu", "float16", "../../../../etc/passwd",
                  "/dev/zero", "/dev/urandom", "${NNFIT_NOT_SET}", None, True, False, [], {}, [None], [0], [-1],
                  [2**31, 2**31], {"class_name": "Dense", "config": {}}, "x" * 100000]


def zip_structures(data):
    """(table, start) of every local header, central header and end record in `data`."""
    found = []
    for sig, table in ((b"PK\x03\x04", LOCAL), (b"PK\x01\x02", CENTRAL), (b"PK\x05\x06", EOCD)):
        at = data.find(sig)
        while at >= 0:
            found.append((table, at))
            at = data.find(sig, at + 1)
    return found


def set_field(data, start, offset, width, value):
    b = bytearray(data)
    at = start + offset
    if at + width <= len(b):
        b[at:at + width] = struct.pack("<H" if width == 2 else "<I", value & (0xFFFF if width == 2 else 0xFFFFFFFF))
    return bytes(b)


def flip(rng, data, count, ranges=None):
    """`count` random bytes replaced (inside `ranges` when given: (start, end) pairs)."""
    b = bytearray(data)
    for _ in range(count):
        if ranges:
            lo, hi = rng.choice(ranges)
            at = rng.randrange(lo, hi)
        else:
            at = rng.randrange(len(b))
        b[at] = rng.choice([b[at] ^ (1 << rng.randrange(8)), rng.randrange(256), 0, 0xFF])
    return bytes(b)


def splice(rng, data):
    at = rng.randrange(len(data))
    if rng.random() < 0.5:
        return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) + data[at:]
    return data[:at] + data[at + rng.randrange(1, 64):]


def in_ranges(ranges, at):
    return any(lo <= at < hi for lo, hi in ranges)


def h5_mutation(rng, h5, data_ranges):
    """A damaged HDF5 file: (bytes, damaged, what). Flips inside a dataset's values may load
    (Keras loads them too); flips elsewhere are in HDF5's structure, which nnfit must refuse or
    read as the clean file; a truncated file must be refused."""
    r = rng.random()
    if r < 0.15:
        cut = rng.randrange(8, len(h5))
        return h5[:cut], True, f"truncated at {cut} of {len(h5)} bytes"
    if r < 0.35 and data_ranges:
        return flip(rng, h5, rng.randint(1, 4), data_ranges), None, "bytes flipped in weight values"
    out = h5
    spots = []
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(h5))
        if r < 0.6 and data_ranges:  # HDF5's structure only: retry into metadata
            for _ in range(20):
                if not in_ranges(data_ranges, at):
                    break
                at = rng.randrange(len(h5))
        spots.append(at)
        out = flip(rng, out, 1, [(at, at + 1)])
    damaged = None if any(in_ranges(data_ranges, s) for s in spots) else "same"
    return out, damaged, f"bytes flipped at {sorted(spots)[:6]}"


def json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from json_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from json_paths(v, path + (i,))


def json_set(value, path, new, delete=False):
    if not path:
        return new
    parent = value
    for p in path[:-1]:
        parent = parent[p]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return value


def mutate_json(rng, text, extra_values=()):
    """A JSON document with one value replaced, a key removed, or its text damaged: (text, what)."""
    doc = json.loads(text)
    paths = list(json_paths(doc))
    path = rng.choice(paths[1:]) if len(paths) > 1 else ()
    r = rng.random()
    if r < 0.6:
        new = rng.choice(HOSTILE_VALUES + list(extra_values))
        return json.dumps(json_set(doc, path, new)), f"{'/'.join(map(str, path))} = {str(new)[:40]!r}"
    if r < 0.7 and path:
        return json.dumps(json_set(doc, path, None, delete=True)), f"{'/'.join(map(str, path))} removed"
    if r < 0.78:
        depth = rng.choice([100, 1000, 100000])
        return json.dumps(json_set(doc, path, None)).replace("null", "[" * depth + "]" * depth, 1), \
            f"{'/'.join(map(str, path))} nested {depth} deep"
    if r < 0.85 and isinstance(doc, dict):
        key = rng.choice(list(doc))
        t = json.dumps(doc)
        return t[:-1] + f", {json.dumps(key)}: {json.dumps(rng.choice(HOSTILE_VALUES[:20]))}}}", f"key {key!r} twice"
    if r < 0.93:
        t = text.encode()
        return flip(rng, t, rng.randint(1, 3)).decode("latin1"), "text bytes flipped"
    cut = rng.randrange(len(text))
    return text[:cut], f"text cut at {cut}"


def rezip(members, path, method=zipfile.ZIP_STORED):
    """Write `members` ((name, bytes) pairs, order kept, names may repeat) as a zip."""
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)


def bomb_member(path, members, name, head, size):
    """A zip whose member `name` is `head` then `size` bytes of spaces, really deflated."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for n, data in members:
            if n != name:
                z.writestr(n, data)
                continue
            info = zipfile.ZipInfo(n, (2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with z.open(info, "w", force_zip64=size > (1 << 31)) as f:
                f.write(head)
                chunk = b" " * (1 << 24)
                left = size
                while left > 0:
                    f.write(chunk[:min(left, len(chunk))])
                    left -= len(chunk)


def keras_mutation(rng, seed_bytes, members, data_ranges, path):
    """A damaged .keras written to `path`: (damaged, family, what)."""
    r = rng.random()
    if r < 0.16:
        open(path, "wb").write(flip(rng, seed_bytes, rng.randint(1, 8)))
        return "same", "zip bytes flipped", ""
    if r < 0.24:
        cut = rng.randrange(len(seed_bytes))
        open(path, "wb").write(seed_bytes[:cut])
        return True, "zip truncated", f"at {cut} of {len(seed_bytes)}"
    if r < 0.30:
        open(path, "wb").write(splice(rng, seed_bytes))
        return "same", "zip bytes inserted or removed", ""
    if r < 0.46:
        table, start = rng.choice(zip_structures(seed_bytes))
        name, offset, width = rng.choice(table)
        if width == 2:
            value = rng.choice(VALUES_16)
        else:
            old = struct.unpack_from("<I", seed_bytes, start + offset)[0]
            value = rng.choice(VALUES_32 + [old + rng.choice([-1, 1, 2**31])])
        open(path, "wb").write(set_field(seed_bytes, start, offset, width, value))
        kind = {id(LOCAL): "local header", id(CENTRAL): "central header", id(EOCD): "end record"}[id(table)]
        return "same", "zip header field", f"{kind} at {start}: {name} = {value:#x}"
    m = dict(members)
    if r < 0.64:
        text, what = mutate_json(rng, m["config.json"].decode())
        rezip([(n, text.encode("utf-8", "surrogateescape") if n == "config.json" else d) for n, d in members], path)
        return None, "config.json value", what
    if r < 0.84:
        h5, damaged, what = h5_mutation(rng, m["model.weights.h5"], data_ranges)
        rezip([(n, h5 if n == "model.weights.h5" else d) for n, d in members], path)
        return damaged, "model.weights.h5 damaged", what
    if r < 0.88:
        text, what = mutate_json(rng, m.get("metadata.json", b"{}").decode())
        rezip([(n, text.encode("utf-8", "surrogateescape") if n == "metadata.json" else d) for n, d in members], path)
        return None, "metadata.json value", what
    if r < 0.96:
        choice = rng.randrange(7)
        names = [n for n, _ in members]
        if choice == 0:
            drop = rng.choice(names)
            rezip([(n, d) for n, d in members if n != drop], path)
            return (True if drop != "metadata.json" else None), "member missing", drop
        if choice == 1:
            dup = rng.choice(names)
            rezip(members + [(dup, m[dup])], path)
            return True, "member twice", dup
        if choice == 2:
            evil = rng.choice(["../../../../tmp/nnfit-zip-slip", "/tmp/nnfit-zip-slip", "assets/../../x", "a" * 4000,
                               "config.json/", "\x00config.json"])
            rezip(members + [(evil, b"payload")], path)
            return None, "extra member", repr(evil[:40])
        if choice == 3:
            rezip(members + [(f"assets/x{i}", b"") for i in range(20000)], path)
            return None, "20000 extra members", ""
        if choice == 4:
            rezip(members, path, zipfile.ZIP_DEFLATED)
            return False, "members deflated", "(a valid file)"
        if choice == 5:
            rezip([(n, d) for n, d in reversed(members)], path)
            return False, "members reordered", "(a valid file)"
        rezip([(n.upper(), d) for n, d in members], path)
        return True, "member names in capitals", ""
    size = rng.choice([65 << 20, 1 << 30, 3 << 30])
    name = rng.choice(["config.json", "metadata.json", "model.weights.h5", "model.weights.h5 (end patched)"])
    if name.endswith("(end patched)"):
        # The superblock (version 0, as h5py writes it) made to claim the spaces as its own.
        head = bytearray(m["model.weights.h5"])
        width = head[13]
        if head[8] == 0 and width == 8:
            struct.pack_into("<Q", head, 24 + 2 * width, len(head) + size)
        bomb_member(path, members, "model.weights.h5", bytes(head), size)
        return True, "deflate bomb", f"{name} + {size >> 20} MiB of spaces"
    bomb_member(path, members, name, m[name], size)
    # nnfit reads config.json (capped) and model.weights.h5 (bounded by its superblock), never
    # metadata.json: a bomb there is never inflated, so loading is right.
    return (True if name != "metadata.json" else None), "deflate bomb", f"{name} + {size >> 20} MiB of spaces"


def special_paths(work):
    """Paths that are not regular files, made under `work`: name -> path."""
    os.makedirs(work, exist_ok=True)
    fifo = os.path.join(work, "fifo.keras")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    link = os.path.join(work, "link-to-fifo.npy")
    if not os.path.lexists(link):
        os.symlink(fifo, link)
    folder = os.path.join(work, "folder.keras")
    os.makedirs(folder, exist_ok=True)
    empty = os.path.join(work, "empty.keras")
    open(empty, "wb").close()
    return {"FIFO": fifo, "/dev/zero": "/dev/zero", "/dev/urandom": "/dev/urandom", "/dev/null": "/dev/null",
            "a folder": folder, "a symlink to a FIFO": link, "an empty file": empty,
            "a missing file": os.path.join(work, "missing.keras")}

