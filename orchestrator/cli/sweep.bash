# sweep.bash - bash completion for `sweep`, installed as
# share/bash-completion/completions/sweep (bash-completion loads it the
# first time `sweep` is completed; `source` it otherwise).
#
# Completes the commands, each command's options, sweep files for the
# commands that read one, and sweep and run ids from the store of the
# sweep home ($SWEEP_HOME, default ./.sweep) for those that take one,
# read with `sweep query` (read-only; nothing when there is no store).

_sweep_ids() {
    local sql=$1
    sweep query "$sql" --csv 2>/dev/null | tail -n +2 | tr -d '\r'
}

_sweep() {
    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
    local commands="validate plan run resume ls show best report query gpus
        reproduce stop tag note rm compare ui export"
    local opts=""

    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    case $cmd in
        validate) opts="--json --help" ;;
        plan) opts="-n --seed --json --help" ;;
        run) opts="--parallel --seed --name --backend --slurm-arg
            --sim-fail-rate --listen --gpus --quiet --help" ;;
        resume) opts="--run-cap --parallel --listen --gpus --slurm-arg
            --quiet --help" ;;
        ls) opts="--json --csv --help" ;;
        best) opts="--json --csv --top --help" ;;
        show) opts="--json --help" ;;
        report) opts="--price --json --plot --timeout --help" ;;
        query) opts="--json --csv --timeout --help" ;;
        gpus) opts="--gpus --json --help" ;;
        reproduce) opts="--json --help" ;;
        stop) opts="--timeout --help" ;;
        tag) opts="--rm --help" ;;
        rm) opts="--yes --help" ;;
        compare) opts="--json --price --timeout --help" ;;
        ui) opts="--listen --help" ;;
        export) opts="wandb --entity --project --run --dry-run --verbose
            --quiet --resend --help" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    case $cmd in
        validate | plan | run | gpus)
            COMPREPLY=($(compgen -f -X '!*.@(yaml|yml|json)' -- "$cur")
                $(compgen -d -- "$cur"))
            ;;
        resume | ls | best | report | rm | compare | ui | export)
            COMPREPLY=($(compgen -W "$(_sweep_ids \
                'select id from sweeps order by created_at desc')" -- "$cur"))
            ;;
        show | reproduce | tag | note)
            COMPREPLY=($(compgen -W "$(_sweep_ids \
                'select id from runs order by created_at desc limit 500')" \
                -- "$cur"))
            ;;
        stop)
            COMPREPLY=($(compgen -W "$(_sweep_ids \
                "select id from runs where state = 'running' union all
                 select id from sweeps where state = 'running'")" -- "$cur"))
            ;;
    esac
}

complete -F _sweep sweep
