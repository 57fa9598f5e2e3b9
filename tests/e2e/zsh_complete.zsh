#!/usr/bin/zsh -f
# Completion as a zsh user gets it: an interactive zsh on a pseudo-terminal
# (zsh/zpty) with compinit and the completion functions of FPATH_DIR, the
# line typed and TAB pressed; prints every match the completion functions
# add, one per line.
#
# usage: zsh -f zsh_complete.zsh FPATH_DIR LINE...
# (each LINE as typed, end it with a space to complete a new word; one shell
# completes them in turn, "== LINE" before the matches of each)
# Exit status 0, or 2 when the shell did not answer within 60 s.

if [[ $1 == --init ]]; then
	# sourced by the inner, interactive shell
	PS1= PS2= RPS1=
	unsetopt beep
	fpath=($2 $fpath)
	autoload -Uz compinit
	compinit -u -D
	# compadd, wrapped: print the words it adds (calls with -O, -A or -D
	# only compute matches for helpers such as _describe)
	compadd() {
		local a
		local -a m
		for a in "$@"; do
			[[ $a == -- || $a != -* ]] && break
			if [[ $a == -[^-]#[OAD]* ]]; then
				builtin compadd "$@"
				return
			fi
		done
		builtin compadd -O m "$@"
		(( $#m )) && print -rn -- $'\n'"<<match>>${(pj:\n<<match>>:)m}"$'\n'
		builtin compadd "$@"
	}
	# TAB: complete, then a mark that completion ended
	__ms_tab() {
		zle complete-word
		print -rn -- $'\n<<done>>\n'
	}
	zle -N __ms_tab
	bindkey '^I' __ms_tab
	print -r -- '<<ready>>'
	return 0
fi

zmodload zsh/zpty || exit 2
local dir=$1 line out chunk l
integer deadline=$(( SECONDS + 120 ))
shift

zpty comp zsh -f -i || exit 2
zpty -w comp "source ${(q)0:A} --init ${(q)dir:A}"
out=
while [[ $out != *'<<ready>>'[$'\r\n']* ]]; do
	(( SECONDS > deadline )) && { print -u2 "zsh did not start: $out"; exit 2 }
	zpty -rt comp chunk && out+=$chunk || sleep 0.05
done
for line in "$@"; do
	# ^U clears what the previous completion left on the line
	zpty -w -n comp $'\C-u'"$line"$'\t'
	out=
	while [[ $out != *'<<done>>'* ]]; do
		(( SECONDS > deadline )) && { print -u2 "no completion of '$line': $out"; exit 2 }
		zpty -rt comp chunk && out+=$chunk || sleep 0.05
	done
	print -r -- "== $line"
	for l in ${(f)${out//$'\r'/}}; do
		[[ $l == '<<match>>'* ]] && print -r -- ${l#'<<match>>'}
	done
done
zpty -d comp
exit 0
