"""keras.ops' array operations (opsB's group: contractions, indexing, data movement,
diagonals, searching; the arrays-only linear algebra, Fourier transforms and
data-dependent shapes; control flow) against Keras 3 on TensorFlow, with
keras_ops_parity.py's machinery: values, gradients (tf.GradientTape against the engine's
autodiff) and, on symbolic tensors, the operation nodes Keras writes and the model's
predictions. An operation of several outputs (split, unstack, top_k, meshgrid) is checked
through a composition that joins them, on values and nodes, and its gradient through its
first output (the engine's gradient with zero cotangents for the others). Control flow is compared on arrays (Keras records control-flow nodes
of its own in a model, nnfit traces the Python; tests/python/test_ops_arrays.py checks the
traced models).

usage: keras_ops_parity_arrays.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import keras_ops_parity as base

N = "normal"
CASES = [
    # contractions
    ("einsum_bmm", "lambda a, b: ops.einsum('bij,bjk->bik', a, b)", [(N, (3, 4, 5)), (N, (3, 5, 2))], True, True, 1e-5),
    ("einsum_dense", "lambda a: ops.einsum('btd,de->bte', a, np.linspace(-1, 1, 15).astype('float32').reshape(5, 3))",
     [(N, (3, 4, 5))], True, True, 1e-5),
    ("einsum_attention", "lambda q, k: ops.einsum('bqhd,bkhd->bhqk', q, k)", [(N, (2, 3, 2, 4)), (N, (2, 5, 2, 4))],
     True, True, 1e-5),
    ("einsum_sum", "lambda a: ops.einsum('bij->bj', a)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("einsum_outer", "lambda a, b: ops.einsum('bi,bj->bij', a, b)", [(N, (3, 4)), (N, (3, 5))], True, True, 1e-5),
    ("einsum_ellipsis", "lambda a, b: ops.einsum('...ij,...jk->...ik', a, b)", [(N, (3, 4, 5)), (N, (3, 5, 2))],
     True, True, 1e-5),
    ("einsum_three", "lambda a, b, c: ops.einsum('ij,jk,kl->il', a, b, c)", [(N, (3, 4)), (N, (4, 5)), (N, (5, 2))],
     True, False, 1e-5),
    ("tensordot_const", "lambda a: ops.tensordot(a, np.linspace(-1, 1, 10).astype('float32').reshape(5, 2), axes=1)",
     [(N, (3, 4, 5))], True, True, 1e-5),
    ("tensordot_pairs", "lambda a, b: ops.tensordot(a, b, axes=[[0, 2], [0, 1]])", [(N, (3, 4, 5)), (N, (3, 5, 2))],
     True, False, 1e-5),
    ("dot", "lambda a, b: ops.dot(a, b)", [(N, (4, 5)), (N, (3, 5, 2))], True, False, 1e-5),
    ("dot_vector", "lambda a, b: ops.dot(a, b)", [(N, (3, 4, 5)), (N, (5,))], True, False, 1e-5),
    ("inner", "lambda a, b: ops.inner(a, b)", [(N, (3, 5)), (N, (2, 5))], True, False, 1e-5),
    ("outer", "lambda a, b: ops.outer(a, b)", [(N, (4,)), (N, (2, 3))], True, False, 1e-5),
    ("vdot", "lambda a, b: ops.vdot(a, b)", [(N, (3, 4)), (N, (3, 4))], True, False, 1e-5),
    ("kron", "lambda a, b: ops.kron(a, b)", [(N, (2, 3)), (N, (3, 2))], True, False, 1e-5),
    ("cross", "lambda a, b: ops.cross(a, b)", [(N, (3, 4, 3)), (N, (3, 4, 3))], False, True, 1e-5),
    ("cross_grad", "lambda a, b: ops.cross(T(a), T(b), axisa=1, axisb=1)", [(N, (3, 3, 2)), (N, (3, 3, 2))], True, False, 1e-5),
    ("diagonal", "lambda x: ops.diagonal(x, offset=1, axis1=1, axis2=2)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("diagonal_grad", "lambda x: ops.diagonal(T(x), offset=-1, axis1=2, axis2=0)", [(N, (3, 4, 5))], True, False, 1e-5),
    ("trace", "lambda x: ops.trace(x, axis1=1, axis2=2)", [(N, (3, 4, 4))], False, True, 1e-5),
    ("trace_grad", "lambda x: ops.trace(T(x), offset=1)", [(N, (3, 4, 4))], True, False, 1e-5),
    ("diag_vector", "lambda x: ops.diag(x, k=-1)", [(N, (4,))], True, False, 1e-5),
    ("diag_matrix", "lambda x: ops.diag(T(x), k=1)", [(N, (4, 5))], True, False, 1e-5),
    ("diagflat", "lambda x: ops.diagflat(x)", [(N, (2, 2))], True, False, 1e-5),
    # splits (several outputs, joined)
    ("split", "lambda x: ops.concatenate(ops.split(x, [1, 3], axis=2)[::-1], axis=2)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("split_sections", "lambda x: ops.split(x, 2, axis=1)[0]", [(N, (3, 4, 5))], True, True, 1e-5),
    ("unstack_grad", "lambda x: ops.unstack(x, axis=2)[0]", [(N, (3, 4, 5))], True, False, 1e-5),
    ("array_split", "lambda x: ops.concatenate(ops.array_split(x, 3, axis=-1)[::-1], axis=-1)", [(N, (3, 4, 5))],
     False, True, 1e-5),
    ("hsplit", "lambda x: ops.hsplit(x, 2)[0]", [(N, (3, 4, 5))], False, True, 1e-5),
    ("vsplit", "lambda x: ops.vsplit(x, 2)[1]", [(N, (4, 3))], False, False, 1e-5),
    ("dsplit", "lambda x: ops.dsplit(x, [2])[1]", [(N, (3, 4, 5))], False, True, 1e-5),
    ("unstack", "lambda x: ops.stack(ops.unstack(x, axis=1)[::-1], axis=1)", [(N, (3, 4, 5))], False, True, 1e-5),
    # indexing
    ("take", "lambda x: ops.take(x, [0, 2, 4], axis=2)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("take_negative", "lambda x: ops.take(x, [-1, 0], axis=1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("take_scalar", "lambda x: ops.take(x, 2, axis=-1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("take_flat", "lambda x: ops.take(x, np.array([[1, 5], [7, 0]]))", [(N, (3, 4))], True, False, 1e-5),
    ("take_embedding", "lambda i: ops.take(np.linspace(-1, 1, 15).astype('float32').reshape(5, 3), ops.cast(i, 'int32'), axis=0)",
     [("ids", (3, 4))], False, True, 1e-5),
    ("take_along_axis", "lambda x, i: ops.take_along_axis(x, ops.cast(i, 'int32'), axis=2)", [(N, (3, 4, 5)), ("ids", (3, 4, 2))],
     False, True, 1e-5),
    ("take_along_axis_grad", "lambda x: ops.take_along_axis(T(x), np.array([[[4, 0]], [[1, 1]], [[2, 3]]]), axis=2)",
     [(N, (3, 4, 5))], True, False, 1e-5),
    ("sort", "lambda x: ops.sort(x, axis=1)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("sort_last", "lambda x: ops.sort(x)", [("ids", (3, 4, 6))], False, True, 1e-5),
    ("argsort", "lambda x: ops.argsort(x, axis=-1)", [("sep", (3, 4, 5))], False, True, 1e-5),
    ("top_k_values", "lambda x: ops.top_k(x, 3)[0]", [("sep", (3, 4, 6))], True, True, 1e-5),
    ("top_k_sorted_values", "lambda x: ops.top_k(x, 10)[0]", [("sep", (3, 12))], True, False, 1e-5),
    ("top_k_indices", "lambda x: ops.top_k(x, 2)[1]", [("sep", (3, 4, 6))], False, True, 1e-5),
    ("top_k_large", "lambda x: ops.top_k(x, 12)[0] + ops.cast(ops.top_k(x, 12)[1], 'float32')", [("sep", (3, 20))],
     False, True, 1e-5),
    ("in_top_k", "lambda t, p: ops.in_top_k(ops.cast(t, 'int32'), p, 2)", [("ids", (6,)), ("sep", (6, 5))], False, False, 1e-5),
    ("segment_sum", "lambda x: ops.segment_sum(x, np.array([0, 2, 0, 4, 2, 0]), num_segments=5)", [(N, (6, 3))],
     True, False, 1e-5),
    ("segment_max", "lambda x: ops.segment_max(x, np.array([1, 1, 0, 3, 0, 1]), num_segments=4)", [("sep", (6, 3))],
     True, False, 1e-5),
    ("scatter", "lambda v: ops.scatter(np.array([[0, 1], [2, 3], [0, 1]]), v, (3, 4))", [(N, (3,))], True, False, 1e-5),
    ("scatter_rows", "lambda v: ops.scatter(np.array([[2], [0]]), v, (4, 3))", [(N, (2, 3))], True, False, 1e-5),
    ("scatter_update", "lambda x, v: ops.scatter_update(x, np.array([[1], [3]]), v)", [(N, (5, 3)), (N, (2, 3))],
     True, False, 1e-5),
    ("scatter_update_add", "lambda x, v: ops.scatter_update(x, np.array([[1, 0], [1, 0]]), v, reduction='add')",
     [(N, (3, 2)), (N, (2,))], True, False, 1e-5),
    # data movement
    ("broadcast_to", "lambda x: ops.broadcast_to(x, (3, 4))", [(N, (4,))], True, False, 1e-5),
    ("slice", "lambda x: ops.slice(x, (0, 1, 2), (3, 2, 3))", [(N, (3, 4, 5))], True, False, 1e-5),
    ("slice_update", "lambda x, u: ops.slice_update(x, (1, 0, 2), u)", [(N, (3, 4, 5)), (N, (2, 4, 2))], False, False, 1e-5),
    ("flip", "lambda x: ops.flip(x, axis=(1, 2))", [(N, (3, 4, 5))], True, True, 1e-5),
    ("flip_all", "lambda x: ops.flip(x)", [(N, (3, 4))], True, False, 1e-5),
    ("fliplr", "lambda x: ops.fliplr(x)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("flipud", "lambda x: ops.flipud(x)", [(N, (3, 4))], True, False, 1e-5),
    ("rot90", "lambda x: ops.rot90(x, k=1, axes=(1, 2))", [(N, (3, 4, 5))], True, True, 1e-5),
    ("roll", "lambda x: ops.roll(x, 2, axis=1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("roll_flat", "lambda x: ops.roll(x, -3)", [(N, (3, 4))], True, False, 1e-5),
    ("tril", "lambda x: ops.tril(x, k=-1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("triu", "lambda x: ops.triu(x, k=1)", [(N, (3, 5, 4))], True, True, 1e-5),
    ("ravel", "lambda x: ops.ravel(x)", [(N, (3, 4))], True, False, 1e-5),
    ("hstack", "lambda a, b: ops.hstack([a, b])", [(N, (3, 4)), (N, (3, 2))], False, True, 1e-5),
    ("vstack", "lambda a, b: ops.vstack([a, b])", [(N, (4,)), (N, (4,))], False, False, 1e-5),
    ("dstack", "lambda a, b: ops.dstack([a, b])", [(N, (3, 4)), (N, (3, 4))], False, True, 1e-5),
    ("append_axis", "lambda a, b: ops.append(a, b, axis=1)", [(N, (3, 4)), (N, (3, 2))], True, True, 1e-5),
    ("append_flat", "lambda a, b: ops.append(a, b)", [(N, (3, 4)), (N, (2,))], True, False, 1e-5),
    ("select", "lambda a, b: ops.select([a > 0.5, a < -0.5], [a, b], 0.0)", [(N, (3, 4)), (N, (3, 4))], False, True, 1e-5),
    ("meshgrid", "lambda a, b: ops.stack(ops.meshgrid(a, b), axis=0)", [(N, (4,)), (N, (3,))], False, False, 1e-5),
    ("meshgrid_ij", "lambda a, b: ops.stack(ops.meshgrid(a, b, indexing='ij'), axis=0)", [(N, (4,)), (N, (3,))],
     False, False, 1e-5),
    ("diff", "lambda x: ops.diff(x, n=2)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("diff_axis", "lambda x: ops.diff(x, axis=1)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("diff_grad", "lambda x: ops.diff(T(x), n=2, axis=0)", [(N, (5, 4))], True, False, 1e-5),
    # segments, searching, sequences
    ("segment_min", "lambda x: ops.segment_min(x, np.array([1, 1, 0, 3, 0, 1]), num_segments=4)", [("sep", (6, 3))],
     True, False, 1e-5),
    ("segment_prod", "lambda x: ops.segment_prod(x, np.array([1, 1, 0, 2, 0, 1]), num_segments=3)", [("pos", (6, 2))],
     True, False, 1e-5),
    ("searchsorted", "lambda v: ops.searchsorted(np.array([-1.0, 0.0, 0.5, 2.0], 'float32'), v)", [(N, (7,))],
     False, False, 1e-5),
    ("searchsorted_right", "lambda v: ops.searchsorted(np.array([0.0, 1.0, 1.0, 3.0], 'float32'), v, side='right')",
     [("ids", (9,))], False, False, 1e-5),
    ("digitize", "lambda x: ops.digitize(x, np.array([-1.0, 0.0, 1.0], 'float32'))", [(N, (3, 4))], False, False, 1e-5),
    ("vander", "lambda x: ops.vander(x, 4)", [(N, (5,))], True, False, 1e-5),
    ("vander_increasing", "lambda x: ops.vander(x, increasing=True)", [(N, (4,))], True, False, 1e-5),
    ("trapezoid", "lambda y: ops.trapezoid(y, dx=0.5, axis=1)", [(N, (3, 4, 5))], True, True, 1e-5),
    # Keras 3.15's TensorFlow unravel_index of a matrix of indices is not NumPy's (nnfit's
    # is; test_ops_arrays.py): a vector here.
    ("unravel_index", "lambda i: np.stack(ops.unravel_index(ops.cast(i * 5, 'int32'), (4, 6)))",
     [("ids", (7,))], False, False, 1e-5),
    ("correlate_valid", "lambda a, v: ops.correlate(a, v)", [(N, (7,)), (N, (3,))], True, False, 1e-5),
    ("correlate_same", "lambda a, v: ops.correlate(a, v, mode='same')", [(N, (7,)), (N, (4,))], True, False, 1e-5),
    ("correlate_full", "lambda a, v: ops.correlate(a, v, mode='full')", [(N, (5,)), (N, (3,))], True, False, 1e-5),
    ("rearrange", "lambda x: ops.rearrange(x, 'b (h w) c -> b c h w', h=2)", [(N, (3, 4, 5))], False, False, 1e-5),
    # arrays only, in NumPy (Keras's values on TensorFlow)
    ("bincount", "lambda x: ops.bincount(ops.cast(x, 'int32'), minlength=6)", [("ids", (7,))], False, False, 1e-5),
    ("bincount_weights", "lambda x, w: ops.bincount(ops.cast(x, 'int32'), weights=w)", [("ids", (7,)), (N, (7,))],
     False, False, 1e-5),
    ("nonzero", "lambda x: np.stack(ops.nonzero(x > 0))", [("sep", (3, 4))], False, False, 1e-5),
    ("unique", "lambda x: ops.unique(ops.cast(x, 'int32'), size=6, fill_value=-1)", [("ids", (9,))], False, False, 1e-5),
    ("tri", "lambda x: x + ops.tri(3, 4, k=1)", [(N, (3, 4))], False, False, 1e-5),
    ("cholesky", "lambda x: ops.cholesky(ops.matmul(x, ops.transpose(x)) + 4 * ops.eye(4))", [(N, (4, 4))],
     False, False, 1e-4),
    ("cholesky_inverse", "lambda x: ops.cholesky_inverse(ops.cholesky(ops.matmul(x, ops.transpose(x)) + 4 * ops.eye(4)))",
     [(N, (4, 4))], False, False, 1e-4),
    ("det", "lambda x: ops.det(x)", [(N, (2, 3, 3))], False, False, 1e-4),
    ("inv", "lambda x: ops.inv(x + 4 * ops.eye(3))", [(N, (2, 3, 3))], False, False, 1e-4),
    ("solve", "lambda a, b: ops.solve(a + 4 * ops.eye(3), b)", [(N, (3, 3)), (N, (3, 2))], False, False, 1e-4),
    ("solve_triangular", "lambda a, b: ops.solve_triangular(ops.tril(a) + 4 * ops.eye(3), b, lower=True)",
     [(N, (3, 3)), (N, (3, 2))], False, False, 1e-4),
    ("lstsq", "lambda a, b: ops.lstsq(a, b)", [(N, (5, 3)), (N, (5, 2))], False, False, 1e-4),
    ("pinv", "lambda a: ops.pinv(a)", [(N, (4, 3))], False, False, 1e-4),
    ("eigh", "lambda x: ops.eigh(ops.matmul(x, ops.transpose(x)))[0]", [(N, (4, 4))], False, False, 1e-4),
    ("svd", "lambda x: ops.svd(x, compute_uv=False)", [(N, (4, 3))], False, False, 1e-4),
    ("qr", "lambda x: ops.abs(ops.qr(x)[1])", [(N, (4, 3))], False, False, 1e-4),
    ("slogdet", "lambda x: np.stack(ops.slogdet(x))", [(N, (3, 3))], False, False, 1e-4),
    ("logdet", "lambda x: ops.logdet(ops.matmul(x, ops.transpose(x)) + ops.eye(3))", [(N, (3, 3))], False, False, 1e-4),
    ("matrix_rank", "lambda x: ops.matrix_rank(ops.matmul(x, ops.transpose(x)))", [(N, (4, 2))], False, False, 1e-5),
    ("lu_factor", "lambda x: ops.lu_factor(x)[0]", [(N, (4, 4))], False, False, 1e-4),
    ("norm", "lambda x: ops.norm(x)", [(N, (3, 4))], False, False, 1e-4),
    ("norm_vector_axis", "lambda x: ops.norm(x, axis=-1)", [(N, (3, 4, 5))], False, False, 1e-4),
    ("norm_ord1", "lambda x: ops.norm(x, ord=1, axis=1)", [(N, (3, 4, 5))], False, False, 1e-4),
    ("norm_fro", "lambda x: ops.norm(x, ord='fro', axis=(1, 2))", [(N, (3, 4, 5))], False, False, 1e-4),
    ("fft", "lambda a, b: ops.stack(ops.fft((a, b)), axis=0)", [(N, (3, 8)), (N, (3, 8))], False, False, 1e-4),
    ("fft2", "lambda a, b: ops.stack(ops.fft2((a, b)), axis=0)", [(N, (2, 4, 8)), (N, (2, 4, 8))], False, False, 1e-4),
    ("ifft2", "lambda a, b: ops.stack(ops.ifft2((a, b)), axis=0)", [(N, (2, 4, 8)), (N, (2, 4, 8))], False, False, 1e-4),
    ("rfft", "lambda a: ops.stack(ops.rfft(a, fft_length=10), axis=0)", [(N, (3, 8))], False, False, 1e-4),
    ("irfft", "lambda a, b: ops.irfft((a, b), fft_length=8)", [(N, (3, 5)), (N, (3, 5))], False, False, 1e-4),
    ("stft", "lambda x: ops.stack(ops.stft(x, 16, 4, 32), axis=0)", [(N, (2, 64))], False, False, 1e-4),
    ("stft_hamming", "lambda x: ops.stack(ops.stft(x, 12, 5, 16, window='hamming', center=False), axis=0)",
     [(N, (2, 60))], False, False, 1e-4),
    # istft divides by the windows' actual overlap (SciPy's, as Keras's NumPy backend); Keras's
    # TensorFlow backend by the steady-state one: the two agree past fft_length - stride samples.
    ("istft", "lambda a, b: ops.istft((a, b), 16, 4, 32)[..., 16:-16]", [(N, (2, 40, 17)), (N, (2, 40, 17))],
     False, False, 1e-4),
    ("istft_no_window", "lambda a, b: ops.istft((a, b), 8, 8, 8, window=None, center=False)", [(N, (3, 5)), (N, (3, 5))],
     False, False, 1e-4),
    ("view_as_real", "lambda x: ops.view_as_real(ops.view_as_complex(x))", [(N, (3, 2))], False, False, 1e-5),
    # control flow
    ("cond", "lambda x: ops.cond(ops.sum(x) > 0, lambda: x * 2, lambda: -x)", [(N, (3, 4))], False, False, 1e-5),
    ("cond_python", "lambda x: ops.cond(True, lambda: x * 2, lambda: -x)", [(N, (3, 4))], False, False, 1e-5),
    ("switch", "lambda x: ops.switch(1, [lambda v: v, lambda v: ops.exp(v)], x)", [(N, (3, 4))], False, False, 1e-4),
    ("fori_loop", "lambda x: ops.fori_loop(0, 3, lambda i, v: v * 0.5 + i, x)", [(N, (3, 4))], False, False, 1e-5),
    ("while_loop", "lambda x: ops.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + 1.0), (0, x))[1]",
     [(N, (3, 4))], False, False, 1e-5),
    ("scan", "lambda x: ops.scan(lambda c, e: (c + e, c * e), ops.zeros((4,)), x)[1]", [(N, (3, 4))], False, False, 1e-5),
    ("scan_carry", "lambda x: ops.scan(lambda c, e: (c + e, None), ops.zeros((4,)), x, reverse=True)[0]", [(N, (3, 4))],
     False, False, 1e-5),
    ("map", "lambda x: ops.map(lambda r: ops.sum(r * r), x)", [(N, (3, 4))], False, False, 1e-5),
    ("associative_scan", "lambda x: ops.associative_scan(lambda a, b: a + b, x, axis=1)", [(N, (3, 5))], False, False, 1e-5),
    ("associative_scan_reverse", "lambda x: ops.associative_scan(ops.maximum, x, reverse=True, axis=0)", [(N, (5, 3))],
     False, False, 1e-5),
    ("vectorized_map", "lambda x: ops.vectorized_map(lambda r: ops.sum(r) * r, x)", [(N, (3, 4))], False, False, 1e-5),
]

# Files both ways: a model of these operations trained a little by nnfit, saved as .keras,
# loads in Keras with the same predictions.
SAVE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from nnfit import keras
    ops = keras.ops
    rng = np.random.default_rng(2)
    x = rng.normal(size=(64, 6, 4)).astype("float32")
    y = rng.integers(0, 3, size=64)
    i = keras.Input(shape=(6, 4))
    h = keras.layers.Dense(4)(i)
    scores = ops.einsum("bqd,bkd->bqk", h, i)
    h = ops.einsum("bqk,bkd->bqd", ops.softmax(ops.tril(scores)), h)
    h = ops.flip(ops.roll(h, 1, axis=1), axis=2) + ops.take(h, [0, 0, 1, 1, 2, 2], axis=1)
    h = ops.concatenate(ops.split(h, [1, 3], axis=2)[::-1], axis=2)
    h = ops.tensordot(h, np.linspace(-1, 1, 12).astype("float32").reshape(4, 3), axes=1)
    m = keras.Model(i, keras.layers.Dense(3, activation="softmax")(ops.reshape(h, (-1, 18))))
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    m.fit(x, y, epochs=2, batch_size=16, verbose=0)
    m.save(sys.argv[1] + "/ops.keras")
    np.save(sys.argv[1] + "/x.npy", x)
    np.save(sys.argv[1] + "/nnfit.npy", m.predict(x, verbose=0))
""")

# The other way: a model of these operations built and saved by Keras loads in nnfit (the
# C++ reader of Keras's operation nodes: Einsum, Take's list, Split's and TopK's several
# outputs, Unstack without num) with Keras's predictions.
KERAS_SAVE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import keras
    ops = keras.ops
    rng = np.random.default_rng(3)
    x = rng.normal(size=(16, 6, 4)).astype("float32")
    i = keras.Input(shape=(6, 4))
    h = keras.layers.Dense(4)(i)
    a, b = ops.split(h, 2, axis=-1)
    v, idx = ops.top_k(ops.einsum("bqd,bkd->bqk", a, b), 3)
    rows = ops.unstack(h, axis=1)
    h = ops.concatenate([ops.sort(v, axis=-1), ops.cast(idx, "float32"), ops.take(h, [3, 0, 1], axis=2),
                         ops.flip(ops.triu(ops.stack(rows[::-1], axis=1)), axis=2)[:, :, :3]], axis=-1)
    m = keras.Model(i, ops.reshape(ops.roll(h, 1, axis=1), (-1, 6 * 12)))
    m.save(sys.argv[1] + "/keras_ops.keras")
    np.save(sys.argv[1] + "/kx.npy", x)
    np.save(sys.argv[1] + "/keras_pred.npy", m.predict(x, verbose=0))
""")
NNFIT_LOAD_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from nnfit import keras
    m = keras.models.load_model(sys.argv[1] + "/keras_ops.keras")
    np.save(sys.argv[1] + "/nnfit_pred.npy", m.predict(np.load(sys.argv[1] + "/kx.npy"), verbose=0))
""")


def keras_file_in_nnfit(argv):
    import tempfile
    import numpy as np
    with tempfile.TemporaryDirectory() as d:
        failed = base.run_scripts(argv, d, [("keras", KERAS_SAVE_SCRIPT), ("nnfit", NNFIT_LOAD_SCRIPT)],
                                  "Keras's file in nnfit")
        return failed or base.close(np.load(d + "/nnfit_pred.npy"), np.load(d + "/keras_pred.npy"), 1e-5,
                                    "Keras's file in nnfit: predictions")


# Keras's cross, diagonal, trace, diag, take_along_axis and diff read `x.ndim`, which the
# gradient's tf.Variable lacks: their gradient cases take T(x), tf.identity's tensor under
# Keras and the array itself under nnfit (whose engine differentiates the operation).
PRELUDE = "T = (lambda v: v) if NNFIT else tf.identity\n"

if __name__ == "__main__":
    base.SCRIPT = base.SCRIPT.replace("CASES = CASES_SOURCE", PRELUDE + "CASES = CASES_SOURCE")
    base.CASES = CASES
    base.SAVE_SCRIPT = SAVE_SCRIPT
    problem = keras_file_in_nnfit(sys.argv)
    print("FAIL", problem) if problem else print("Keras's file of these operations loads in nnfit: predictions agree")
    sys.exit(base.main(sys.argv) or (1 if problem else 0))
