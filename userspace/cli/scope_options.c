// SPDX-License-Identifier: MIT
/* The scope options of report and convert (scope_options.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "scope_options.h"

int scope_options__handle(struct scope_options *o, int ch, const char *arg, const char *cmd)
{
	enum analysis_field field;
	int err;

	switch (ch) {
	case SCOPE_OPT_PID:
		field = ANALYSIS_FIELD_PID;
		break;
	case SCOPE_OPT_TID:
		field = ANALYSIS_FIELD_TID;
		break;
	case SCOPE_OPT_COMM:
		field = ANALYSIS_FIELD_COMM;
		break;
	case SCOPE_OPT_MODULE:
		field = ANALYSIS_FIELD_MODULE;
		break;
	case SCOPE_OPT_CONTAINER:
		field = ANALYSIS_FIELD_CONTAINER;
		break;
	case SCOPE_OPT_CGROUP:
		field = ANALYSIS_FIELD_CGROUP;
		break;
	case SCOPE_OPT_MERGE:
		o->merge = true;
		return 1;
	default:
		return 0;
	}
	err = analysis_scope_filter__add(&o->filter, field, arg);
	if (err == -EINVAL)
		fprintf(stderr, "microscope %s: --%s takes %s, not '%s'\n", cmd,
			analysis__field_name(field),
			field == ANALYSIS_FIELD_PID || field == ANALYSIS_FIELD_TID
				? "a decimal id (or !ID to exclude)"
				: "a value (or !VALUE to exclude)",
			arg);
	else if (err)
		fprintf(stderr, "microscope %s: out of memory\n", cmd);
	return err ? err : 1;
}

int scope_options__view(const struct scope_options *o, const struct capture *c, bool per_thread,
			struct analysis_scope **out)
{
	const char *mode = capture__meta(c, "mode");
	bool roots = !per_thread && !o->merge && mode && !strcmp(mode, "system-wide");

	*out = NULL;
	if (!roots && !o->filter.nterms)
		return 0;
	return analysis_scope__new(c, &o->filter, roots, out);
}

void scope_options__release(struct scope_options *o)
{
	analysis_scope_filter__release(&o->filter);
}
