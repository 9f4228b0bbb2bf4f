# bash completion for vramscope: subcommands, their options, report names,
# export formats, allocator options, traces (*.db) and snapshots (*.pickle).

_vramscope ()
{
  local cur prev words cword
  _init_completion || return

  local commands="record recover import report diff export whatif predict view help --version"
  if [[ $cword -eq 1 ]]; then
    COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    return
  fi

  local cmd=${words[1]}
  case $cmd in
    record)
      # After the program's name everything is the program's own.
      local i
      for ((i = 2; i < cword; i++)); do
        case ${words[i]} in
          --) _command_offset $((i + 1)); return ;;
          -o|--output|--torch|--job|--window) ((i++)) ;;
          -*) ;;
          *) _command_offset $i; return ;;
        esac
      done
      case $prev in
        -o|--output) _filedir db; return ;;
        --torch) COMPREPLY=($(compgen -W "auto on off" -- "$cur")); return ;;
        --job) return ;;
        --window) COMPREPLY=($(compgen -W "30s 10m 1h" -- "$cur")); return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-o --output -f --force --kernels --no-kernels --torch= --job --window --timings -q --quiet --help --" -- "$cur"))
        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
      else
        _command_offset $cword
      fi
      ;;
    recover)
      case $prev in
        -o|--output) _filedir db; return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-o --output -f --force --keep -q --quiet --help" -- "$cur"))
      else
        _filedir -d
      fi
      ;;
    import)
      case $prev in
        -o|--output) _filedir db; return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-o --output -f --force -q --quiet --timings --no-finalize --help" -- "$cur"))
      else
        _filedir '@(pickle|pkl)'
      fi
      ;;
    report)
      case $prev in
        --format) COMPREPLY=($(compgen -W "text csv json" -- "$cur")); return ;;
        --by) COMPREPLY=($(compgen -W "site stack" -- "$cur")); return ;;
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --device|--allocator|--buckets|--from|--to|--limit|--width) return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--format --device --allocator --limit --by --full-paths --full-stacks --width --buckets --from --to --color --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "diagnose summary peak leaks timeline oom fragmentation kernels ranges roles growth meta ranks" -- "$cur"))
        _filedir db
      fi
      ;;
    diff)
      case $prev in
        --format) COMPREPLY=($(compgen -W "text csv json" -- "$cur")); return ;;
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --limit|--width) return ;;
        --baseline) _filedir db; return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--format --baseline --limit --full-paths --width --color --help" -- "$cur"))
      else
        _filedir db
      fi
      ;;
    export)
      case $prev in
        -f|--format) COMPREPLY=($(compgen -W "perfetto snapshot folded sqlite" -- "$cur")); return ;;
        --at) COMPREPLY=($(compgen -W "peak exit" -- "$cur")); return ;;
        -o|--output) _filedir; return ;;
        --device|--allocator) return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-f --format -o --output --force --device --allocator --at --help" -- "$cur"))
      else
        _filedir db
      fi
      ;;
    whatif)
      case $prev in
        --format) COMPREPLY=($(compgen -W "text csv" -- "$cur")); return ;;
        --alloc-conf)
          COMPREPLY=($(compgen -W "expandable_segments:True max_split_size_mb: roundup_power2_divisions: garbage_collection_threshold: max_non_split_rounding_mb:" -- "$cur"))
          [[ ${COMPREPLY-} == *: ]] && compopt -o nospace
          return ;;
        --limit|--device) return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--alloc-conf --limit --format --device --help" -- "$cur"))
      else
        _filedir db
      fi
      ;;
    predict)
      case $prev in
        --format) COMPREPLY=($(compgen -W "text csv json" -- "$cur")); return ;;
        --limit|--batch) return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--batch --limit --format --help" -- "$cur"))
      else
        _filedir
      fi
      ;;
    view)
      case $prev in
        --screenshot) _filedir png; return ;;
        --pane) COMPREPLY=($(compgen -W "diagnosis attribution flame allocations fragmentation state oom" -- "$cur")); return ;;
        --size) return ;;
        --whatif) COMPREPLY=($(compgen -W "expandable_segments:True max_split_size_mb: roundup_power2_divisions: garbage_collection_threshold:" -- "$cur")); return ;;
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--screenshot --force --size --pane --whatif --version --help" -- "$cur"))
      else
        _filedir db
      fi
      ;;
  esac
} && complete -F _vramscope vramscope
