"""Keras's registry of custom objects, shared by keras.saving and keras.utils (one table, as
Keras has one): register_keras_serializable, get_registered_name, get_registered_object,
get_custom_objects and CustomObjectScope/custom_object_scope.

Ported from Keras 3.15 (keras/src/saving/object_registration.py; Apache License 2.0,
Copyright The Keras Authors). As in Keras, a name is looked up in the innermost
CustomObjectScope (a scope replaces the one around it while it is open), then the global
table, then the caller's custom_objects, then its module_objects; the registered name of an
object is kept in a table keyed by the object, so a subclass of a registered class is not
taken for it. nnfit also sets ``_registered_name`` on a registered object for the code that
writes a .keras file (registered_name_or_none reads it through the table).
"""
import inspect

GLOBAL_CUSTOM_OBJECTS = {}  # "package>name" -> class or function
GLOBAL_CUSTOM_NAMES = {}    # class or function -> "package>name"
_scope = {"objects": {}}    # the open CustomObjectScope's dict (Keras's custom_objects_scope_dict)


class CustomObjectScope:
    """Keras's ``with custom_object_scope({"MyLayer": MyLayer}):``: the names are found by
    deserialization and load_model while the scope is open (an inner scope replaces an
    outer one until it closes, as in Keras)."""

    def __init__(self, custom_objects):
        self.custom_objects = custom_objects or {}
        self.backup = None

    def __enter__(self):
        self.backup = dict(_scope["objects"])
        _scope["objects"] = dict(self.custom_objects)
        return self

    def __exit__(self, *args, **kwargs):
        _scope["objects"] = dict(self.backup)


custom_object_scope = CustomObjectScope  # Keras's alias: the same class


def scope_objects():
    """The open CustomObjectScope's names (a copy)."""
    return dict(_scope["objects"])


def get_custom_objects():
    """The global table of registered objects (Keras's GLOBAL_CUSTOM_OBJECTS: the dict
    itself, which a user may update, as Keras's docs show)."""
    return GLOBAL_CUSTOM_OBJECTS


def register_keras_serializable(package="Custom", name=None):
    """Keras's decorator: registers a class (which needs get_config) or a function as
    "package>name" (name: its ``__name__``); a second registration of the name replaces
    the first, as in Keras."""
    def decorator(arg):
        class_name = name if name is not None else arg.__name__
        registered_name = f"{package}>{class_name}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        GLOBAL_CUSTOM_OBJECTS[registered_name] = arg
        GLOBAL_CUSTOM_NAMES[arg] = registered_name
        try:
            arg._registered_name = registered_name
        except (AttributeError, TypeError):  # a builtin or a slotted object: the table still has it
            pass
        return arg
    return decorator


def get_registered_name(obj):
    """The name `obj` is registered under, else its ``__name__``."""
    if obj in GLOBAL_CUSTOM_NAMES:
        return GLOBAL_CUSTOM_NAMES[obj]
    return obj.__name__


def registered_name_or_none(obj):
    """`obj`'s registered name, or None when it (not a base class of it) is not registered."""
    try:
        return GLOBAL_CUSTOM_NAMES.get(obj)
    except TypeError:  # an unhashable object is not registered
        return None


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object for `name`: from the open CustomObjectScope, the registry, `custom_objects`,
    then `module_objects` (Keras's order); None when none has it."""
    if name in _scope["objects"]:
        return _scope["objects"][name]
    if name in GLOBAL_CUSTOM_OBJECTS:
        return GLOBAL_CUSTOM_OBJECTS[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def find_class(entry, custom_objects=None):
    """The class of a layer entry of a .keras file from the user's custom objects or the
    registry, or None."""
    for name in (entry.get("registered_name"), entry.get("class_name")):
        if name:
            cls = get_registered_object(name, custom_objects)
            if cls is not None:
                return cls
    return None
