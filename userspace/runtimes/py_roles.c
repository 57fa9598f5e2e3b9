// SPDX-License-Identifier: MIT
/*
 * Which native CPython functions are the interpreter itself: the evaluation
 * loop, whose activations run interpreted frames, and the call plumbing
 * between an interpreted call site and the next activation (vectorcall,
 * tp_call slots, frame setup).  Names are CPython's own (Python/ceval.c,
 * Objects/call.c, Objects/methodobject.c, Objects/classobject.c,
 * Objects/typeobject.c of 3.10-3.13).  Native code Python calls (builtins,
 * extension functions) is not plumbing and keeps its frames.
 */
#include <string.h>

#include "py_roles.h"

static const char *const plumbing_exact[] = {
	"_PyEval_EvalFrame", "_PyEval_Vector", "PyEval_EvalCode", "PyEval_EvalCodeEx",
	"_PyEval_EvalCode", "call_function", "do_call_core", "_PyObject_MakeTpCall",
	"slot_tp_call", "slot_tp_init", "type_call", "object_vacall", "cfunction_call",
	"vectorcall_method", "vectorcall_unbound", "_PyObject_Call_Prepend",
	"_PyCFunctionWithKeywords_TrampolineCall", "method_vectorcall", "func_vectorcall",
	"_PyEval_EvalFrameDefault", "PyObject_Call", "PyObject_CallObject",
	"PyObject_CallOneArg", "PyObject_Vectorcall", "PyObject_VectorcallMethod",
	"_PyObject_Call", "_PyObject_CallNoArgs", "PyObject_CallNoArgs",
	"_PyObject_FastCallDictTstate", "_PyObject_VectorcallTstate", "_PyFunction_Vectorcall",
	"_PyObject_FastCall", "PyObject_CallFunctionObjArgs", "PyObject_CallMethodObjArgs",
	"slot_tp_richcompare", "slot_tp_hash", "slot_tp_repr", "slot_tp_str",
	"slot_tp_iternext", "slot_tp_getattr_hook", "slot_nb_add", "slot_sq_item",
	"slot_mp_subscript", "vectorcall_maybe", "_Py_call_instrumentation",
};

static const char *const plumbing_prefix[] = {
	"method_vectorcall_", "cfunction_vectorcall_", "_PyEval_Vector", "_PyObject_VectorcallTstate",
	"_PyFunction_Vectorcall", "slot_tp_",
};

enum py_role py_role__of(const char *full)
{
	char name[128];
	size_t len;

	if (!full || !full[0])
		return PY_ROLE_NONE;
	/* Compilers' clones keep the name before a dot: "list_sort.lto_priv.0",
	 * "_PyEval_EvalFrameDefault.cold". */
	len = strcspn(full, ".");
	if (len >= sizeof(name))
		return PY_ROLE_NONE;
	memcpy(name, full, len);
	name[len] = '\0';
	if (!strcmp(name, "_PyEval_EvalFrameDefault") && !full[len])
		return PY_ROLE_EVAL;
	for (size_t i = 0; i < sizeof(plumbing_exact) / sizeof(plumbing_exact[0]); i++)
		if (!strcmp(name, plumbing_exact[i]))
			return PY_ROLE_PLUMBING;
	for (size_t i = 0; i < sizeof(plumbing_prefix) / sizeof(plumbing_prefix[0]); i++)
		if (!strncmp(name, plumbing_prefix[i], strlen(plumbing_prefix[i])))
			return PY_ROLE_PLUMBING;
	return PY_ROLE_NONE;
}
