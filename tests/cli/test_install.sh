#!/usr/bin/env bash
# test_install.sh BUILD_DIR - `cmake --install` to a temporary prefix puts
# `sweep` on PATH with its manual page and bash completion: `sweep --help`
# runs from another folder, `man sweep` opens the page found from PATH
# alone (as man-db derives PREFIX/share/man from PREFIX/bin) and from
# MANPATH, it names every command, and the completion offers the commands
# and a command's options.
set -euo pipefail
build=$1
cmake=${CMAKE_COMMAND:-cmake}
prefix=$(mktemp -d /tmp/sweep-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
[ -x "$prefix/bin/sweep" ] || fail "no $prefix/bin/sweep"
page=$prefix/share/man/man1/sweep.1
comp=$prefix/share/bash-completion/completions/sweep
[ -f "$page" ] || fail "no man page at $page"
[ -f "$comp" ] || fail "no completion at $comp"

# from another folder, by PATH alone
out=$(cd "$prefix" && PATH="$prefix/bin:/usr/bin:/bin" sweep --help)
grep -q "^  stop " <<<"$out" || fail "sweep --help lacks stop: $out"
grep -q "^  compare " <<<"$out" || fail "sweep --help lacks compare"
(cd / && PATH="$prefix/bin:/usr/bin:/bin" sweep --version) | grep -q "^sweep " ||
  fail "sweep --version"

# `man sweep` opens it, from another folder: found by PATH alone (no
# MANPATH: man-db looks in PREFIX/share/man for PREFIX/bin on PATH), and
# by MANPATH
found=$(cd / && env -u MANPATH PATH="$prefix/bin:/usr/bin:/bin" man -w sweep) ||
  fail "man sweep finds no page from PATH"
[ "$found" = "$page" ] || fail "man sweep found $found, not $page"
text=$(cd / && env -u MANPATH PATH="$prefix/bin:/usr/bin:/bin" MANWIDTH=80 \
  man -P cat sweep 2>&1 | col -b)
grep -q "^NAME" <<<"$text" || fail "man sweep has no NAME section: $text"
grep -q "sweep - run hyperparameter sweeps" <<<"$text" ||
  fail "man sweep's NAME line: $text"
(cd / && MANPATH="$prefix/share/man" MANWIDTH=80 man -P cat sweep 2>&1) |
  grep -q "^SWEEP(1)" || fail "man sweep with MANPATH=$prefix/share/man"

# the manual page renders, and names every command of --help
text=$(MANWIDTH=80 man -l "$page" 2>&1 | col -b)
grep -q "SWEEP(1)" <<<"$text" || fail "man -l does not render: $text"
for cmd in $(sed -n 's/^  \([a-z]\+\) .*/\1/p' <<<"$out"); do
  grep -q "^ *$cmd " <<<"$text" || grep -q "^ *$cmd$" <<<"$text" ||
    fail "the manual page lacks the command $cmd"
done

# the completion: commands, then a command's options
words=$(bash -c 'source "$1"; COMP_WORDS=(sweep st); COMP_CWORD=1; _sweep;
  echo "${COMPREPLY[*]}"' _ "$comp")
[ "$words" = "stop" ] || fail "completing 'sweep st' gave '$words'"
words=$(bash -c 'source "$1"; COMP_WORDS=(sweep resume --run); COMP_CWORD=2;
  _sweep; echo "${COMPREPLY[*]}"' _ "$comp")
[ "$words" = "--run-cap" ] || fail "completing 'sweep resume --run' gave '$words'"
echo "test_install: ok ($prefix)"
