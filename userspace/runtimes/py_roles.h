/* SPDX-License-Identifier: MIT */
/* Roles of native CPython functions (py_roles.c). */
#ifndef MS_PY_ROLES_H
#define MS_PY_ROLES_H

enum py_role {
	PY_ROLE_NONE = 0,     /* ordinary native code */
	PY_ROLE_EVAL = 1,     /* _PyEval_EvalFrameDefault: one activation runs interpreted frames */
	PY_ROLE_PLUMBING = 2, /* call machinery between interpreted frames and activations */
};

/* The role of a native function by its symbol name (NULL or "" is NONE); a
 * clone suffix (".cold", ".lto_priv.0") is ignored, but only the evaluation loop
 * itself (no suffix) is PY_ROLE_EVAL. */
enum py_role py_role__of(const char *name);

#endif
