package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/template"
)

func init() {
	commands["completion"] = command{
		summary: "print a shell completion script (bash, zsh or fish)",
		run:     runCompletion,
	}
}

const completionUsage = `Usage: tracegap completion bash|zsh|fish

Prints a script that completes tracegap's commands, their flags and file
names. Load it from the shell's startup file:

  bash:  source <(tracegap completion bash)    # in ~/.bashrc
  zsh:   source <(tracegap completion zsh)     # in ~/.zshrc, after compinit
  fish:  tracegap completion fish | source     # in ~/.config/fish/config.fish

A command's flags are read from "tracegap COMMAND --help" as they are
completed, so the script never falls behind the binary.
`

// completionScripts are the scripts by shell; {{.Commands}} is the
// commands, space-separated.
var completionScripts = map[string]string{
	"bash": `# bash completion for tracegap
_tracegap() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "{{.Commands}} help" -- "$cur") $(compgen -f -- "$cur"))
    return 0
  fi
  if [[ $cmd == help ]]; then
    COMPREPLY=($(compgen -W "{{.Commands}}" -- "$cur")); return
  fi
  if [[ $cmd == completion ]]; then
    COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(tracegap "$cmd" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _tracegap tracegap
`,
	"zsh": `#compdef tracegap
# zsh completion for tracegap
_tracegap() {
  local -a cmds flags
  cmds=({{.Commands}})
  if (( CURRENT == 2 )); then
    compadd -a cmds; compadd help; _files; return
  fi
  case $words[2] in
    help) compadd -a cmds; return ;;
    completion) compadd bash zsh fish; return ;;
  esac
  if [[ $PREFIX == -* ]]; then
    flags=(${(f)"$(tracegap $words[2] --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)"})
    compadd -a flags; return
  fi
  _files
}
compdef _tracegap tracegap
`,
	"fish": `# fish completion for tracegap
function __tracegap_flags
    set -l cmd (commandline -opc)[2]
    tracegap $cmd --help 2>&1 | string match -ar -- '--[a-z][a-z0-9-]*' | sort -u
end
complete -c tracegap -n __fish_use_subcommand -a '{{.Commands}} help'
complete -c tracegap -n '__fish_seen_subcommand_from help' -a '{{.Commands}}'
complete -c tracegap -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
complete -c tracegap -n 'not __fish_use_subcommand; and string match -q -- "-*" (commandline -ct)' -a '(__tracegap_flags)'
`,
}

func runCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, completionUsage)
		return exitOK
	}
	shells := slices.Sorted(maps.Keys(completionScripts))
	if len(args) != 1 || completionScripts[args[0]] == "" {
		fmt.Fprintf(stderr, "tracegap completion: expected one shell, %s (see tracegap completion --help)\n", strings.Join(shells, ", "))
		return exitUsage
	}
	names := slices.Sorted(maps.Keys(commands))
	t := template.Must(template.New(args[0]).Parse(completionScripts[args[0]]))
	if err := t.Execute(stdout, struct{ Commands string }{strings.Join(names, " ")}); err != nil {
		fmt.Fprintf(stderr, "tracegap completion: %s\n", safe(err))
		return exitUsage
	}
	return exitOK
}
