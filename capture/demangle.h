/* SPDX-License-Identifier: MIT */
/*
 * Display form of a symbol name.  Captures keep the raw (mangled) name, its
 * identity; views demangle it as perf does by default.
 */
#ifndef MS_CAPTURE_DEMANGLE_H
#define MS_CAPTURE_DEMANGLE_H

#include <stddef.h>

/*
 * Writes the display form of name into buf (size bytes, NUL-terminated,
 * truncated to fit; buf may be NULL when size is 0): the Itanium C++ ABI
 * demangling ("_ZN2ns5Class6methodEi" -> "ns::Class::method(int)", via
 * libstdc++'s __cxa_demangle; Rust legacy names come out as the C++
 * demangler reads them) with a version or "@plt" suffix after '@' kept as
 * is; any other name unchanged.  Returns the length of the full display
 * form (as snprintf).
 */
size_t capture__demangle(const char *name, char *buf, size_t size);

#endif
