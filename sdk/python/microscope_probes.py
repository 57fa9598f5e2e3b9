# SPDX-License-Identifier: MIT
"""Zones and marks for `microscope record`, through the C probes SDK
(sdk/c/microscope_probes.h) loaded with ctypes.

    import microscope_probes as mp
    work = mp.site("work")
    with mp.zone(work):
        ...
    mp.mark(work, 42)

The library is libmicroscope_probes.so from $MICROSCOPE_PROBES_LIB (a file
path), else next to this module, else the dynamic linker's search path.
Without it every call does nothing and available() is False, so a program
runs unchanged where microscope is not installed.
"""
import contextlib
import ctypes
import os

_NAME = "libmicroscope_probes.so"


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.environ.get("MICROSCOPE_PROBES_LIB"), os.path.join(here, _NAME), _NAME):
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        lib.microscope_probes_define.restype = ctypes.c_void_p
        lib.microscope_probes_define.argtypes = [ctypes.c_char_p]
        for fn in (lib.microscope_zone_begin, lib.microscope_zone_end):
            fn.restype = None
            fn.argtypes = [ctypes.c_void_p]
        lib.microscope_mark.restype = None
        lib.microscope_mark.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        lib.microscope_probes_enabled.restype = ctypes.c_int
        lib.microscope_probes_dropped.restype = ctypes.c_uint64
        lib.microscope_probes_timeouts.restype = ctypes.c_uint32
        return lib
    return None


_lib = _load()


def available():
    """True when the C library was loaded."""
    return _lib is not None


def site(name):
    """The site called name (the same for the same name), or None without
    the library."""
    if _lib is None:
        return None
    return _lib.microscope_probes_define(name.encode("utf-8"))


def begin(s):
    if _lib is not None and s:
        _lib.microscope_zone_begin(s)


def end(s):
    if _lib is not None and s:
        _lib.microscope_zone_end(s)


def mark(s, value):
    if _lib is not None and s:
        _lib.microscope_mark(s, value & 0xFFFFFFFFFFFFFFFF)


@contextlib.contextmanager
def zone(s):
    """with zone(site): the block is one zone of site on this thread."""
    begin(s)
    try:
        yield
    finally:
        end(s)


def enabled():
    """True while a recorder reads this process."""
    return _lib is not None and bool(_lib.microscope_probes_enabled())


def dropped():
    return _lib.microscope_probes_dropped() if _lib is not None else 0
