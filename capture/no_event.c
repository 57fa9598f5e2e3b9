// SPDX-License-Identifier: MIT
/* A capture with no event opened as one with an empty event (no_event.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/merge.h"
#include "capture/no_event.h"

int capture__ensure_event(struct capture **c, char *err, size_t errlen)
{
	struct capture_builder *b;
	struct capture *copy = NULL;
	const char *name;
	void *bytes = NULL;
	size_t len = 0;
	int rc;

	if ((*c)->nevents)
		return 0;
	b = capture_builder__new();
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = capture_builder__merge(b, *c, 0, UINT64_MAX);
	if (rc) {
		snprintf(err, errlen, "copying a capture with no events: %s",
			 rc == -ENOMEM ? "out of memory" : "a bad reference");
		goto cleanup;
	}
	name = capture__meta(*c, "event");
	capture_builder__add_event(b, &(struct capture_event){
					  .name = capture_builder__string(b, name && *name ? name
											 : "samples"),
					  .unit = capture_builder__string(b, "samples"),
				  });
	rc = capture_builder__serialize(b, &bytes, &len);
	if (rc) {
		snprintf(err, errlen, "copying a capture with no events: %s",
			 capture_builder__error(b));
		goto cleanup;
	}
	rc = capture__open_mem(bytes, len, "", &copy, err, errlen);
	if (rc)
		goto cleanup;
	capture__free(*c);
	*c = copy;
cleanup:
	free(bytes);
	capture_builder__free(b);
	return rc;
}
