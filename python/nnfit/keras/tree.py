"""keras.tree on nnfit: Keras 3.15's nested-structure utilities with the semantics of its
optree backend, in plain Python: lists, tuples, namedtuples and dicts are nodes (a dict's
children in sorted-key order, an OrderedDict's in its own order), None and everything else
are leaves; a path is the tuple of indices and keys from the root."""
import collections

__all__ = ["MAP_TO_NONE", "assert_same_paths", "assert_same_structure", "flatten", "flatten_with_path", "is_nested",
           "lists_to_tuples", "map_shape_structure", "map_structure", "map_structure_up_to", "pack_sequence_as",
           "traverse"]


class MAP_TO_NONE:
    """Returned by traverse's function to put None in a place (None itself means: keep going)."""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _node(x):
    """(keys, children, rebuild) of a node, or None for a leaf."""
    if isinstance(x, collections.OrderedDict):
        keys = list(x)
    elif isinstance(x, dict):
        keys = sorted(x)
    elif isinstance(x, (list, tuple)):
        keys = list(range(len(x)))
    else:
        return None
    children = [x[k] for k in keys]
    if isinstance(x, dict):
        def rebuild(values, x=x, keys=keys):  # the dict's own key order back, as optree restores it
            by_key = dict(zip(keys, values))
            if isinstance(x, collections.defaultdict):
                out = collections.defaultdict(x.default_factory)
                out.update((k, by_key[k]) for k in x)
                return out
            return type(x)((k, by_key[k]) for k in x)
    elif _is_namedtuple(x):
        def rebuild(values, x=x):
            return type(x)(*values)
    else:
        def rebuild(values, x=x):
            return type(x)(values)
    return keys, children, rebuild


def is_nested(structure):
    return _node(structure) is not None


def flatten_with_path(structure):
    out = []

    def visit(x, path):
        node = _node(x)
        if node is None:
            out.append((path, x))
            return
        for k, c in zip(node[0], node[1]):
            visit(c, path + (k,))
    visit(structure, ())
    return out


def flatten(structure):
    return [leaf for _, leaf in flatten_with_path(structure)]


def _same_node(a, b):
    na, nb = _node(a), _node(b)
    if na is None or nb is None:
        return na is None and nb is None
    kinds = [type(a) if _is_namedtuple(a) else (dict if isinstance(a, dict) else type(a)),
             type(b) if _is_namedtuple(b) else (dict if isinstance(b, dict) else type(b))]
    return kinds[0] == kinds[1] and na[0] == nb[0]


def map_structure(func, *structures, none_is_leaf=True):
    if not structures:
        raise ValueError("Must provide at least one structure")

    def visit(xs):
        first = xs[0]
        node = _node(first) if (none_is_leaf or first is not None) else None
        if first is None and not none_is_leaf:
            return None
        if node is None:
            if any(_node(x) is not None for x in xs[1:]):
                raise ValueError("Structures don't have the same nested structure.")
            return func(*xs)
        for x in xs[1:]:
            if not _same_node(first, x):
                raise ValueError("Structures don't have the same nested structure.")
        nodes = [_node(x) for x in xs]
        return node[2]([visit([n[1][i] for n in nodes]) for i in range(len(node[1]))])
    return visit(list(structures))


def map_structure_up_to(shallow_structure, func, *structures):
    if not structures:
        raise ValueError("Must provide at least one structure")

    def visit(shallow, xs):
        node = _node(shallow)
        if node is None:
            return func(*xs)
        for x in xs:
            if not _same_node(shallow, x):
                raise ValueError("Structures don't have the same nested structure.")
        nodes = [_node(x) for x in xs]
        return node[2]([visit(node[1][i], [n[1][i] for n in nodes]) for i in range(len(node[1]))])
    return visit(shallow_structure, list(structures))


def assert_same_structure(a, b, check_types=None):
    map_structure(lambda *_: None, a, b)


def assert_same_paths(a, b):
    a_paths = {p for p, _ in flatten_with_path(a)}
    b_paths = {p for p, _ in flatten_with_path(b)}
    if a_paths != b_paths:
        msg = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            msg += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            msg += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(msg)


def pack_sequence_as(structure, flat_sequence):
    flat = list(flat_sequence)
    it = iter(flat)
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Too {'few' if len(flat) < count else 'many'} leaves for PyTreeSpec; expected: {count}, "
                         f"got: {len(flat)}.")

    def visit(x):
        node = _node(x)
        if node is None:
            return next(it)
        return node[2]([visit(c) for c in node[1]])
    return visit(structure)


def traverse(func, structure, top_down=True):
    def children_of(x):
        node = _node(x)
        if node is None:
            return x
        return node[2]([traverse(func, c, top_down=top_down) for c in node[1]])

    if top_down:
        ret = func(structure)
        if ret is None:
            return children_of(structure)
    else:
        done = children_of(structure)
        ret = func(done)
        if ret is None:
            return done
    return None if ret is MAP_TO_NONE else ret


def lists_to_tuples(structure):
    return traverse(lambda x: tuple(x) if isinstance(x, list) else None, structure, top_down=False)


def map_shape_structure(func, structure):
    def visit(x):
        if isinstance(x, (list, tuple)) and all(isinstance(e, (int, type(None))) for e in x):
            return func(x)
        node = _node(x)
        if node is None:
            return func(x)
        return node[2]([visit(c) for c in node[1]])
    return visit(structure)
