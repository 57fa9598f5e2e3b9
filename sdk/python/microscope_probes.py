# SPDX-License-Identifier: MIT
"""Zones and marks for `microscope record`, through the C probes SDK
(sdk/c/microscope_probes.h) loaded with ctypes.

    import microscope_probes as mp
    work = mp.site("work")
    with mp.zone(work):
        ...
    mp.mark(work, 42)

The library is libmicroscope_probes.so from $MICROSCOPE_PROBES_LIB (a file
path), else next to this module, else in the source tree's build/ (this
module in sdk/python/ of a built checkout), else the dynamic linker's search
path.  Without it every call does nothing and available() is False, so a
program runs unchanged where microscope is not installed.

Arguments are checked the same with and without the library: site() takes
a str (TypeError otherwise; ValueError if it holds a NUL), begin(), end()
and mark() a site from site() or None (TypeError otherwise), mark() an int
value in 0 .. 2**64 - 1 (TypeError for another type, ValueError out of
range).  Names are cut to 55 bytes of UTF-8 by the C library and a process
has at most 1024 sites (docs/probes.md, Limits).
"""
import contextlib
import ctypes
import os

_NAME = "libmicroscope_probes.so"


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.environ.get("MICROSCOPE_PROBES_LIB"), os.path.join(here, _NAME),
                 os.path.join(here, "..", "..", "build", _NAME), _NAME):
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
        lib.microscope_probes_sites_refused.restype = ctypes.c_uint64
        return lib
    return None


_lib = _load()


def available():
    """True when the C library was loaded."""
    return _lib is not None


def _check_site(s):
    if s is not None and (isinstance(s, bool) or not isinstance(s, int)):
        raise TypeError("a site from site() or None, not %s" % type(s).__name__)


def site(name):
    """The site called name (a str; the same site for the same name), or
    None without the library (or when the process's site table is full)."""
    if not isinstance(name, str):
        raise TypeError("site name must be str, not %s" % type(name).__name__)
    raw = name.encode("utf-8")
    if b"\0" in raw:
        raise ValueError("site name holds a NUL")
    if _lib is None:
        return None
    return _lib.microscope_probes_define(raw)


def begin(s):
    _check_site(s)
    if _lib is not None and s:
        _lib.microscope_zone_begin(s)


def end(s):
    _check_site(s)
    if _lib is not None and s:
        _lib.microscope_zone_end(s)


def mark(s, value):
    """A point event of site s with value, an int in 0 .. 2**64 - 1."""
    _check_site(s)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("mark value must be int, not %s" % type(value).__name__)
    if not 0 <= value <= 0xFFFFFFFFFFFFFFFF:
        raise ValueError("mark value %d is not in 0 .. 2**64 - 1" % value)
    if _lib is not None and s:
        _lib.microscope_mark(s, value)


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


def sites_refused():
    """Defines refused because the site table was full (1024 sites)."""
    return _lib.microscope_probes_sites_refused() if _lib is not None else 0
