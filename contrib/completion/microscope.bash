# bash completion for microscope (installed by `make install` as
# $(PREFIX)/share/bash-completion/completions/microscope).
# Options come from `microscope COMMAND --help` (one source with the help
# texts); the values of enumerated options are listed here.

_microscope_options()
{
	# every --long option the command's help mentions, once
	"${1:-microscope}" "$2" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

_microscope()
{
	local cur prev cmd i
	COMPREPLY=()
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case "${COMP_WORDS[i]}" in
		record|report|convert|symbolize|snapshot|serve) cmd="${COMP_WORDS[i]}"; break ;;
		esac
	done
	if [[ -z "$cmd" ]]; then
		COMPREPLY=($(compgen -W "record report convert symbolize snapshot serve help --help --version" -- "$cur"))
		return 0
	fi
	case "$prev" in
	--look) COMPREPLY=($(compgen -W "logical native python" -- "$cur")); return 0 ;;
	--granularity) COMPREPLY=($(compgen -W "function line address module" -- "$cur")); return 0 ;;
	--inline) COMPREPLY=($(compgen -W "show fold" -- "$cur")); return 0 ;;
	--sort) COMPREPLY=($(compgen -W "self total" -- "$cur")); return 0 ;;
	--to) COMPREPLY=($(compgen -W "folded pprof speedscope chrome svg capture frames" -- "$cur")); return 0 ;;
	--from) COMPREPLY=($(compgen -W "capture pprof folded perf-script" -- "$cur")); return 0 ;;
	--weight) COMPREPLY=($(compgen -W "samples off-cpu-ns wall" -- "$cur")); return 0 ;;
	--by) COMPREPLY=($(compgen -W "process thread container module" -- "$cur")); return 0 ;;
	--python) COMPREPLY=($(compgen -W "bpf off" -- "$cur")); return 0 ;;
	--call-graph) COMPREPLY=($(compgen -W "fp dwarf auto" -- "$cur")); return 0 ;;
	--preset) COMPREPLY=($(compgen -W "light default detailed production" -- "$cur")); return 0 ;;
	--export) COMPREPLY=($(compgen -W "pprof speedscope folded" -- "$cur")); return 0 ;;
	--continuous) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
	--symbolize) COMPREPLY=($(compgen -W "immediate deferred" -- "$cur")); return 0 ;;
	-e|--event) COMPREPLY=($(compgen -W "cpu-clock cycles off-cpu" -- "$cur")); return 0 ;;
	-o|--output|--svg|--save-raw|--replay|--debug-dir)
		COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
	esac
	if [[ "$cur" == -* ]]; then
		COMPREPLY=($(compgen -W "$(_microscope_options "${COMP_WORDS[0]}" "$cmd")" -- "$cur"))
		return 0
	fi
	COMPREPLY=($(compgen -f -X '!*.@(msc|old|pb.gz|pprof|pb|folded|txt|perf|script)' -- "$cur") \
		   $(compgen -d -- "$cur"))
	return 0
}
complete -o filenames -F _microscope microscope
