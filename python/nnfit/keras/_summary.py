"""keras.Model.summary on nnfit's engine: Keras's table (the engine lays it out as Keras's
rich table; Model::summary), with Keras's line_length, positions, expand_nested,
show_trainable and layer_range, printed line by line or passed to print_fn."""
import re
import shutil

from nnfit.keras import _prefix, _progbar, _subclassed


def summary(model, line_length, positions, print_fn, expand_nested, show_trainable, layer_range):
    """Prints Keras's summary table (or passes each line to print_fn), with Keras's
    line_length, positions, expand_nested, show_trainable and layer_range."""
    if model._untraced:  # Keras shows a subclassed model's layers before it is built
        if line_length or positions or expand_nested or show_trainable or layer_range:
            raise NotImplementedError("summary: a subclassed model not built yet shows its layers only; build it "
                                      "(call it or fit) for line_length, positions, expand_nested, show_trainable "
                                      "and layer_range")
        text = _subclassed.unbuilt_summary(model)
    else:
        first, last = _summary_range(model, layer_range)
        handle = model._handle_or_build()
        # The layers' trainable flags as they are now (Keras's summary shows them; the engine
        # takes them at compile, so they are set for the table and put back after it).
        engine_layers, now = model._engine_layers(), model._trainable_flags()
        for layer, trains in zip(engine_layers, now):
            handle.set_layer_trainable(layer.name, trains)
        try:  # Keras narrows its table to the terminal (shutil's: $COLUMNS, the terminal, else 80)
            text = handle.summary(
                shutil.get_terminal_size().columns, line_length=int(line_length or 0),
                positions=[float(p) for p in positions or []], expand_nested=bool(expand_nested),
                show_trainable=bool(show_trainable), first_row=first, last_row=last).rstrip("\n")
        finally:
            applied = getattr(model, "_applied_flags", None)  # what the last compile set, if any
            for layer, trains in zip(engine_layers, applied if applied is not None else now):
                handle.set_layer_trainable(layer.name, trains)
        if model._prefix is not None:
            text = _prefix.summary(text, model._prefix)
    if _subclassed.is_subclassed(type(model)) and not model._untraced:  # Keras lists layers, not inputs
        text = _subclassed.without_input_rows(text)
    if print_fn is None:  # Keras prints through print_msg when interactive logging is off
        print_fn = print if _progbar.is_interactive_logging_enabled() else _progbar.print_msg
    for line in text.split("\n"):
        print_fn(line)


def _summary_range(model, layer_range):
    """Keras's layer_range: (first, last) indices into the model's summary rows (its layers,
    InputLayers first in a Functional model), the names matched as re.match patterns."""
    if layer_range is None:
        return 0, 0
    if not isinstance(layer_range, (list, tuple)) or len(layer_range) != 2:
        raise ValueError(f"layer_range must be a list or tuple of length 2. Received: layer_range = {layer_range} "
                         f"of length {len(layer_range) if hasattr(layer_range, '__len__') else '?'}")
    if not all(isinstance(n, str) for n in layer_range):
        raise ValueError(f"layer_range should contain string type only. Received: {layer_range}")
    names = [l.name for l in model.layers]
    if not model._is_sequential and not _subclassed.is_subclassed(type(model)):
        names = [l.name for l in model._layers]  # InputLayers included, as Keras's Functional.layers
    lower = [i for i, n in enumerate(names) if re.match(layer_range[0], n)]
    upper = [i for i, n in enumerate(names) if re.match(layer_range[1], n)]
    if not lower or not upper:
        raise ValueError(f"Passed layer_names do not match the layer names in the model. Received: {layer_range}")
    if min(lower) > max(upper):
        return min(upper), max(lower) + 1
    return min(lower), max(upper) + 1
