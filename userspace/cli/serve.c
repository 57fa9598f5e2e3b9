// SPDX-License-Identifier: MIT
/*
 * microscope serve CAPTURE|DIR [--diff BASE] [--port N] [--bind ADDR] [--open]
 * An adapter: parses options into struct serve_options and calls
 * serve__run (userspace/serve/).
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "userspace/serve/serve.h"

static const char serve_usage[] =
	"usage: microscope serve CAPTURE|DIR [--diff BASE] [--source-dir DIR] [--port N]\n"
	"                        [--bind ADDR] [--open]\n"
	"\n"
	"Serve CAPTURE's flame graph, call tree, function table, per-thread timeline\n"
	"(samples and off-CPU intervals with their wakers) and summary to a browser.\n"
	"Queries run in this process over analysis/; the pages ask typed queries\n"
	"(docs/api.md) and never load raw rows.  Read-only; works offline.\n"
	"A DIR of segments (record --continuous) is served as one profile, read\n"
	"again when its segments change: new segments appear without a restart.\n"
	"A DIR with no segment yet is waited for (until its first, or Ctrl-C),\n"
	"and so is a DIR that does not exist yet, in a directory that does (not\n"
	"a missing *.msc: that is a mistyped capture, an error at once).\n"
	"Drag across the timeline to select a time range for every view.\n"
	"\n"
	"  --diff BASE     also compare CAPTURE with BASE, a capture or a segment\n"
	"                  directory read whole (the diff view; /api/diff's\n"
	"                  base_start/base_end narrow BASE to a part of its own\n"
	"                  recording, docs/api.md)\n"
	"  --source-dir D  the source view reads relative source paths (as DWARF\n"
	"                  names them, from the build's directory) below D, and\n"
	"                  shows source files below D whatever their mode.\n"
	"                  Otherwise it shows only source-named files every user\n"
	"                  of the host can read (the capture names the files;\n"
	"                  docs/api.md /api/source)\n"
	"  --port N        TCP port (default 0: a free one, printed)\n"
	"  --bind ADDR     listen on this numeric address instead of 127.0.0.1;\n"
	"                  anyone who can reach it can read the profile (a warning\n"
	"                  is printed).  Without it, only loopback peers are served.\n"
	"  --open          open the page with xdg-open\n"
	"  -h, --help      this text\n"
	"\n"
	"Prints \"microscope serve: http://ADDR:PORT/\" once listening; stops on\n"
	"SIGINT or SIGTERM.  Exit status 0, 1 when a capture cannot be read or the\n"
	"address bound, 2 for a usage error.\n";

enum { OPT_DIFF = 0x5301, OPT_PORT, OPT_BIND, OPT_OPEN, OPT_SOURCE_DIR };

static int serve_usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "microscope serve: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nRun 'microscope serve --help' for usage.\n");
	return 2;
}

static bool bind_is_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "diff", required_argument, NULL, OPT_DIFF },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "bind", required_argument, NULL, OPT_BIND },
		{ "open", no_argument, NULL, OPT_OPEN },
		{ "source-dir", required_argument, NULL, OPT_SOURCE_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct serve_options o = { .bind = "127.0.0.1", .loopback_only = true };
	struct in_addr a4;
	struct in6_addr a6;
	char *end;
	long port;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_DIFF:
			o.diff = optarg;
			break;
		case OPT_PORT:
			port = strtol(optarg, &end, 10);
			if (!*optarg || *end || port < 0 || port > 65535)
				return serve_usage_error("--port takes 0 to 65535, not '%s'", optarg);
			o.port = (uint16_t)port;
			break;
		case OPT_BIND:
			if (inet_pton(AF_INET, optarg, &a4) != 1 &&
			    inet_pton(AF_INET6, optarg, &a6) != 1)
				return serve_usage_error("--bind takes a numeric IP address, not '%s'",
							 optarg);
			o.bind = optarg;
			o.loopback_only = false;
			break;
		case OPT_OPEN:
			o.open = true;
			break;
		case OPT_SOURCE_DIR:
			o.source_dir = optarg;
			break;
		case 'h':
			fputs(serve_usage, stdout);
			return 0;
		default:
			return serve_usage_error("%s", "bad option");
		}
	}
	if (optind != argc - 1)
		return serve_usage_error("%s", "expected one CAPTURE or DIR");
	o.capture = argv[optind];
	if (!bind_is_loopback(o.bind))
		fprintf(stderr,
			"microscope serve: warning: listening on %s: anyone who can reach this "
			"address can read the profile (no authentication, no TLS)\n",
			o.bind);
	return serve__run(&o) ? 1 : 0;
}
