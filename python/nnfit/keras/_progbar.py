"""keras.utils.Progbar and Keras's interactive logging switch (enable_interactive_logging,
disable_interactive_logging, is_interactive_logging_enabled), with print_msg, through which
nnfit.keras prints what Keras prints through its own: fit's, evaluate's and predict's
progress lines, summary() without print_fn, the callbacks' messages and the dataset
utilities' "Found N files" lines. With interactive logging off, Keras sends these to
absl's logging at INFO; nnfit sends them to Python's logging (logger "nnfit.keras", INFO),
so neither prints them by default.

Progbar is ported from Keras 3.15 (keras/src/utils/progbar.py; Apache License 2.0,
Copyright The Keras Authors): the same text, widths, averaging of stateless metrics and
ETA, so a custom training loop that draws one looks as it does under Keras.
"""
import logging
import math
import os
import sys
import time

import numpy as np

_state = {"interactive": True}
_logger = logging.getLogger("nnfit.keras")


def enable_interactive_logging():
    """Keras's: logs go to stdout (the default)."""
    _state["interactive"] = True


def disable_interactive_logging():
    """Keras's: logs go to logging (nnfit's logger "nnfit.keras", at INFO) instead of stdout."""
    _state["interactive"] = False


def is_interactive_logging_enabled():
    return _state["interactive"]


def print_msg(message, line_break=True):
    """Keras's io_utils.print_msg: to stdout while interactive logging is on, else to logging."""
    message = str(message)
    if is_interactive_logging_enabled():
        message = f"{message}\n" if line_break else message
        try:
            sys.stdout.write(message)
        except UnicodeEncodeError:
            encoding = sys.stdout.encoding or "utf-8"
            sys.stdout.write(message.replace("━", "=").encode(encoding, errors="ignore").decode(encoding))
        sys.stdout.flush()
    else:
        _logger.info(message)


class Progbar:
    """Keras's progress bar: ``update(current, values)`` / ``add(n, values)``; stateless
    metrics are averaged over the steps, stateful ones shown as given."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None, stateless_metrics=None,
                 unit_name="step"):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be provided. "
                             "`stateful_metrics` is used to make metrics stateless by default (with an exclusion "
                             "list), while `stateless_metrics` is used to make metrics stateful by default (with an "
                             "exclusion list).")
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        if stateful_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = set(stateful_metrics), None
        elif stateless_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = None, set(stateless_metrics)
        else:
            self.stateful_metrics, self.stateless_metrics = set(), None
        self._dynamic_display = ((hasattr(sys.stdout, "isatty") and sys.stdout.isatty()) or "ipykernel" in sys.modules
                                 or "posix" in sys.modules or "PYCHARM_HOSTED" in os.environ)
        self._seen_so_far = 0
        self._values = {}
        self._values_order = []
        self._start = time.time()
        self._last_update = 0
        self._time_at_epoch_start = self._start
        self._time_after_first_step = None
        self._prev_total_width = 0

    def update(self, current, values=None, finalize=None):
        """Draws the bar at step `current`; `values`: (name, value of the last step) pairs."""
        if finalize is None:
            finalize = False if self.target is None else current >= self.target
        for k, v in values or []:
            if k not in self._values_order:
                self._values_order.append(k)
            stateless = (k not in self.stateful_metrics) if self.stateful_metrics is not None \
                else (k in self.stateless_metrics)
            if stateless:
                if finalize:
                    self._values[k] = [v, 1]
                else:
                    base = max(current - self._seen_so_far, 1)
                    if k not in self._values:
                        self._values[k] = [v * base, base]
                    else:
                        self._values[k][0] += v * base
                        self._values[k][1] += base
            else:
                self._values[k] = [v, 1]
        self._seen_so_far = current
        now = time.time()
        time_per_unit = self._estimate_step_duration(current, now)
        if self.verbose == 1:
            self._draw(current, now, time_per_unit, finalize)
        elif self.verbose == 2 and finalize and self.target is not None and self.target > 0:
            numdigits = int(math.log10(self.target)) + 1
            info = f"{f'%{numdigits}d/%d' % (current, self.target)} - {now - self._start:.0f}s"
            info += f" -{self._format_time(time_per_unit, self.unit_name)}"
            for k in self._values_order:
                total, count = self._values[k]
                if not isinstance(total, float):
                    total = np.mean(total)
                avg = total / max(1, count)
                info += f" - {k}: {avg:.4f}" if avg > 1e-3 else f" - {k}: {avg:.4e}"
            print_msg(info + "\n", line_break=False)
        self._last_update = now

    def _draw(self, current, now, time_per_unit, finalize):
        if now - self._last_update < self.interval and not finalize:
            return
        message = ("\b" * self._prev_total_width + "\r") if self._dynamic_display else "\n"
        special_char_len = 0
        if self.target is not None and self.target > 0:
            numdigits = int(math.log10(self.target)) + 1
            bar = f"\x1b[1m{f'%{numdigits}d/%d' % (current, self.target)}\x1b[0m "
            special_char_len += 8
            prog_width = int(self.width * float(current) / self.target)
            if prog_width > 0:
                bar += f"\33[32m{'━' * prog_width}\x1b[0m"
                special_char_len += 9
            bar += f"\33[37m{'━' * (self.width - prog_width)}\x1b[0m"
            special_char_len += 9
        else:
            bar = "%7d/Unknown" % current
        message += bar
        if self.target is not None and self.target > 0 and not finalize:
            eta = time_per_unit * (self.target - current)
            if eta > 3600:
                eta_format = "%d:%02d:%02d" % (eta // 3600, (eta % 3600) // 60, eta % 60)
            elif eta > 60:
                eta_format = "%d:%02d" % (eta // 60, eta % 60)
            else:
                eta_format = "%ds" % eta
            info = f" \x1b[1m{eta_format}\x1b[0m"
        else:
            info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
        special_char_len += 8
        info += self._format_time(time_per_unit, self.unit_name)
        for k in self._values_order:
            info += f" - {k}:"
            total, count = self._values[k]
            if not isinstance(total, float):
                total = np.mean(total)
            avg = total / max(1, count)
            info += f" {avg:.4f}" if abs(avg) > 1e-3 else f" {avg:.4e}"
        message += info
        total_width = len(bar) + len(info) - special_char_len
        if self._prev_total_width > total_width:
            message += " " * (self._prev_total_width - total_width)
        if finalize:
            message += "\n"
        print_msg(message, line_break=False)
        self._prev_total_width = total_width

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)

    @staticmethod
    def _format_time(time_per_unit, unit_name):
        if time_per_unit >= 1 or time_per_unit == 0:
            return f" {time_per_unit:.0f}s/{unit_name}"
        if time_per_unit >= 1e-3:
            return f" {time_per_unit * 1000.0:.0f}ms/{unit_name}"
        return f" {time_per_unit * 1000000.0:.0f}us/{unit_name}"

    def _estimate_step_duration(self, current, now):
        """Seconds per step, leaving out the first step once there are more."""
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            time_per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            time_per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return time_per_unit
