"""The hash functions TensorFlow's string ops use, which Keras's Hashing, HashedCrossing and
the lookup layers' OOV buckets call: FarmHash's Fingerprint64 (farmhashna::Hash64; TF's
``to_hash_bucket_fast``), SipHash-2-4 keyed by two 64-bit words (TF's StrongKeyedHash,
``to_hash_bucket_strong``) and FingerprintCat64 (``tf.sparse.cross_hashed``). Pure Python
on 64-bit words, checked against TensorFlow's values by Keras.PreprocessingParity; a bucket
is the unsigned hash modulo the number of buckets, as TF computes it."""

_M = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _rot(v, s):
    """FarmHash's Rotate: right by s bits."""
    return ((v >> s) | (v << (64 - s))) & _M if s else v


def _rotl(v, s):
    """SipHash's ROTL: left by s bits."""
    return ((v << s) | (v >> (64 - s))) & _M


def _f64(b, i):
    return int.from_bytes(b[i:i + 8], "little")


def _f32(b, i):
    return int.from_bytes(b[i:i + 4], "little")


def _shift_mix(v):
    return v ^ (v >> 47)


def _len16(u, v, mul):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len0to16(s, n):
    if n >= 8:
        mul = (_K2 + n * 2) & _M
        a = (_f64(s, 0) + _K2) & _M
        b = _f64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _len16(c, d, mul)
    if n >= 4:
        mul = (_K2 + n * 2) & _M
        a = _f32(s, 0)
        return _len16((n + (a << 3)) & _M, _f32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len17to32(s, n):
    mul = (_K2 + n * 2) & _M
    a = (_f64(s, 0) * _K1) & _M
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & _M
    d = (_f64(s, n - 16) * _K2) & _M
    return _len16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)


def _len33to64(s, n):
    mul = (_K2 + n * 2) & _M
    a = (_f64(s, 0) * _K2) & _M
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & _M
    d = (_f64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _len16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_f64(s, 16) * mul) & _M
    f = _f64(s, 24)
    g = ((y + _f64(s, n - 32)) * mul) & _M
    h = ((z + _f64(s, n - 24)) * mul) & _M
    return _len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M, (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak32(s, off, a, b):
    w, x, y, z = _f64(s, off), _f64(s, off + 8), _f64(s, off + 16), _f64(s, off + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(s):
    """FarmHash Fingerprint64 of the bytes `s` (TensorFlow's Fingerprint64)."""
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _f64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = n - 64
    off = 0
    while True:
        x = (_rot((x + y + v0 + _f64(s, off + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v1 + _f64(s, off + 48)) & _M, 42) * _K1) & _M
        x ^= w1
        y = (y + v0 + _f64(s, off + 40)) & _M
        z = (_rot((z + w0) & _M, 33) * _K1) & _M
        v0, v1 = _weak32(s, off, (v1 * _K1) & _M, (x + w0) & _M)
        w0, w1 = _weak32(s, off + 32, (z + w1) & _M, (y + _f64(s, off + 16)) & _M)
        z, x = x, z
        off += 64
        if off == end:
            break
    mul = (_K1 + ((z & 0xFF) << 1)) & _M
    off = last64
    w0 = (w0 + ((n - 1) & 63)) & _M
    v0 = (v0 + w0) & _M
    w0 = (w0 + v0) & _M
    x = (_rot((x + y + v0 + _f64(s, off + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v1 + _f64(s, off + 48)) & _M, 42) * mul) & _M
    x ^= (w1 * 9) & _M
    y = (y + v0 * 9 + _f64(s, off + 40)) & _M
    z = (_rot((z + w0) & _M, 33) * mul) & _M
    v0, v1 = _weak32(s, off, (v1 * mul) & _M, (x + w0) & _M)
    w0, w1 = _weak32(s, off + 32, (z + w1) & _M, (y + _f64(s, off + 16)) & _M)
    z, x = x, z
    return _len16((_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z) & _M, (_len16(v1, w1, mul) + x) & _M, mul)


def siphash(k0, k1, s):
    """SipHash-2-4 of the bytes `s` under the key (k0, k1), as TensorFlow's StrongKeyedHash."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def rounds(v0, v1, v2, v3, count):
        for _ in range(count):
            v0 = (v0 + v1) & _M
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _M
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _M
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _M
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = len(s)
    full = n - n % 8
    for off in range(0, full, 8):
        m = _f64(s, off)
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    m = ((n & 0xFF) << 56) | int.from_bytes(s[full:], "little")
    v3 ^= m
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= m
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def fingerprint_cat64(fp1, fp2):
    """TensorFlow's FingerprintCat64: two fingerprints combined, order-dependent."""
    mul = 0xC6A4A7935BD1E995
    result = fp1 ^ mul
    result ^= (_shift_mix((fp2 * mul) & _M) * mul) & _M
    result = (result * mul) & _M
    result = (_shift_mix(result) * mul) & _M
    return _shift_mix(result)


def as_bytes(value, encoding="utf-8"):
    """A value as the bytes TensorFlow hashes: a string's encoding, bytes as they are, an
    integer's decimal text (tf.strings.as_string)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode(encoding)
    return str(int(value)).encode("ascii")


def bucket_fast(values, num_buckets):
    """to_hash_bucket_fast over an iterable of values: a list of bucket indices."""
    return [fingerprint64(as_bytes(v)) % num_buckets for v in values]


def bucket_strong(values, num_buckets, key):
    """to_hash_bucket_strong with key [k0, k1]: a list of bucket indices."""
    k0, k1 = (int(k) & _M for k in key)
    return [siphash(k0, k1, as_bytes(v)) % num_buckets for v in values]
