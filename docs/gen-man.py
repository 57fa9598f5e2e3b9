#!/usr/bin/env python3
"""Generate microscope.1 from the help texts, so the man page and `--help`
have one source: `gen-man.py BIN OUT` runs `BIN --help` and
`BIN COMMAND --help` for each command and lays them out in roff (each
command's help verbatim under its own section).  Standard library only."""
import subprocess
import sys

COMMANDS = ["record", "report", "convert", "symbolize", "snapshot", "serve"]


def roff_text(text):
    out = []
    for line in text.rstrip("\n").splitlines():
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def help_of(binary, *args):
    proc = subprocess.run([binary] + list(args) + ["--help"], capture_output=True, text=True,
                          check=True)
    return proc.stdout


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen-man.py BIN OUT")
    binary, out = sys.argv[1], sys.argv[2]
    top = help_of(binary)
    parts = [
        '.TH MICROSCOPE 1 "" "microscope" "User Commands"',
        ".SH NAME",
        "microscope \\- a Linux sampling profiler: record, report, convert, symbolize",
        ".SH SYNOPSIS",
        ".nf",
        "\n".join("\\fBmicroscope %s\\fR [\\fIoptions\\fR]" % c for c in COMMANDS),
        ".fi",
        ".SH DESCRIPTION",
        ".nf",
        roff_text(top),
        ".fi",
    ]
    for cmd in COMMANDS:
        parts += [".SH \"MICROSCOPE %s\"" % cmd.upper(), ".nf", roff_text(help_of(binary, cmd)),
                  ".fi"]
    parts += [
        ".SH EXIT STATUS",
        "0 done; 1 the work failed (an input missing, unreadable or damaged, an output",
        "not written at the end, out of memory); 2 a usage or argument error found before",
        "any work (an option, value, regular expression or --event that does not fit, an",
        "output refused before anything is read).  record with a command exits with the",
        "command's status (128+N for signal N, 127 if it could not be run).",
        ".SH FILES",
        ".TP",
        ".B microscope.msc",
        "the capture record writes and report and convert read when given no file;",
        "the previous one is kept as microscope.msc.old unless record -f.",
        ".SH SEE ALSO",
        ".BR perf (1),",
        ".BR pprof (1)",
        "",
    ]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(parts))
    import os
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
