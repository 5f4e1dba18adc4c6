#!/usr/bin/env bash
# The layer check of docs/design.md ("Layers"): each layer of the brigade
# crate imports only the layers below it; there are no exceptions. Prints every import that breaks a rule, and exits non-zero if
# there is one; prints "layers: ok" otherwise.
#
# Usage: scripts/layers.sh [SRC]   (SRC: the crate's src/, by default
# crates/brigade/src of this repository)
#
# What counts as an import: a path that names another module of the
# crate (`crate::x`, `super::x`, a `use` group over several lines), in
# code; comments, and what is compiled for tests only (an item under
# `#[cfg(test)]` or `#[cfg(all(test, ...))]` at the margin, and the test
# modules at the end of a file), are not read. Re-exports (`pub use`) count: a module that re-exports an item
# depends on it.
set -euo pipefail

src=${1:-"$(dirname "$0")/../crates/brigade/src"}
cd "$src"

# Every file's code as logical lines, "path:line: text": comments and
# trailing test modules dropped, a `use` spread over lines joined into one.
code() {
    awk '
        FNR == 1 { skipping = 0; joined = ""; in_block = 0; test_cfg = 0; test_item = 0 }
        skipping { next }
        # A test-only attribute at the margin guards the item after it: a
        # module (then the rest of the file is test modules), or one item,
        # which ends at its own line if that ends with ";" or "}", else at the
        # next "}" at the margin. Neither is read.
        test_item { if ($0 ~ /^}/) test_item = 0; next }
        test_cfg && /^(pub(\([a-z]+\))? )?mod / { skipping = 1; next }
        test_cfg && /^#\[/ { next }
        test_cfg { test_cfg = 0; if ($0 !~ /[;}][ \t]*$/) test_item = 1; next }
        /^#\[cfg\((all\()?test/ { test_cfg = 1; next }
        in_block { if ($0 ~ /\*\//) in_block = 0; next }
        /^[ \t]*\/\*/ { if ($0 !~ /\*\//) in_block = 1; next }
        /^[ \t]*\/\// { next }
        {
            line = $0
            sub(/[ \t]\/\/.*$/, "", line)
            if (joined != "") {
                joined = joined " " line
                if (line ~ /;/) { print FILENAME ":" start ": " joined; joined = "" }
                next
            }
            if (line ~ /^[ \t]*(pub(\([a-z]+\))? )?use / && line !~ /;/) {
                joined = line; start = FNR; next
            }
            print FILENAME ":" FNR ": " line
        }
    ' "$@"
}

# The files of each layer (see docs/design.md).
l0=(sync epoch.rs policy.rs slab_shrink.rs metrics)
l1=(driver)
l2=(task yield_queue admission)
# L4, the API: the facade (`Runtime`, `Builder` and its flavours,
# `Handle::block_on` and `enter`, start-up, shutdown, the metrics view and
# their publishing), the spawn functions and `LocalSet` (which reach the
# scheduler through `Handle` and this thread's runtime), and the resources
# (io/, net/, time/, signal/, fs/, process/: they reach the driver through
# this thread's runtime). L4 may import any layer, so it has no rule.
l4_files=(lib.rs runtime/mod.rs runtime/lifecycle/start.rs runtime/builder/mod.rs runtime/builder/checks.rs
    runtime/builder/tokio_names.rs runtime/enter.rs runtime/lifecycle/shutdown.rs runtime/metrics_source.rs
    runtime/metrics_publish.rs
    task/spawn.rs task/task_builder.rs task/join_set.rs task/local.rs)
# Test modules that are files of their own (declared under `cfg(test)`).
is_test='(^|/)(tests|loom_models)(/|\.rs$)|_tests\.rs$'
rs_files() {
    find "$@" -name '*.rs' 2>/dev/null | grep -vE "$is_test" |
        grep -vxF -f <(printf '%s\n' "${l4_files[@]}") | sort || true
}
l3_files() { rs_files runtime yield_if_busy.rs; }

failed=0
# rule NAME FILES... -- ERE: every code line of FILES matching ERE breaks
# the rule NAME.
rule() {
    local name=$1 files=() pattern
    shift
    while [[ $1 != -- ]]; do files+=("$1"); shift; done
    pattern=$2
    local hits
    hits=$(code "${files[@]}" | grep -E "$pattern" || true)
    if [[ -n $hits ]]; then
        printf '%s\n%s\n\n' "== $name" "$hits"
        failed=1
    fi
}

above_l0='crate::(driver|task|yield_queue|admission|runtime|io|net|time|signal|fs|process|yield_if_busy)\b|crate::(Runtime|Handle|Builder|spawn|spawn_blocking|spawn_elastic)\b'
above_l1='crate::(task|yield_queue|admission|runtime|io|net|time|signal|fs|process|yield_if_busy)\b|crate::(Runtime|Handle|Builder|spawn|spawn_blocking|spawn_elastic)\b'
# L2 names nothing of the scheduler nor of the API.
above_l2='crate::(runtime|io|net|time|signal|fs|process|yield_if_busy)\b|crate::(Runtime|Handle|Builder|spawn|spawn_blocking|spawn_elastic|spawn_local|yield_now)\b|(crate::task|super)::(spawn|task_builder|join_set|local|Builder|JoinSet|LocalSet|spawn_local)\b|(crate::task|super)::\{[^}]*\b(spawn|task_builder|join_set|local|Builder|JoinSet|LocalSet|spawn_local)\b'
# L3 names no item of L4: not the facade's files, nor the `Runtime`,
# `Builder` or `Handle` of `runtime/mod.rs` (L3's `Handle` is
# `runtime/handle.rs`'s), nor the spawn functions or the resources.
facade='(crate::runtime|super)::(lifecycle|builder|metrics_publish|enter)\b|(crate::runtime|crate|super)::(Runtime|Builder|Handle|spawn|spawn_blocking|spawn_elastic)\b|(crate::runtime|super)::\{[^}]*\b(lifecycle|builder|metrics_publish|enter|Runtime|Builder|Handle)\b|crate::(io|net|time|signal|fs|process)\b|crate::task::(spawn|task_builder|join_set|local|Builder|JoinSet|LocalSet|spawn_local)\b|crate::task::\{[^}]*\b(spawn|task_builder|join_set|local|Builder|JoinSet|LocalSet|spawn_local)\b'

rule "L0 (primitives, policy.rs) imports nothing above L0" \
    $(rs_files "${l0[@]}") -- "$above_l0"
rule "L1 (driver/) imports only L0" \
    $(rs_files "${l1[@]}") -- "$above_l1"
rule "L2 (the task core, yield queue, admission) imports nothing of runtime/ or the API" \
    $(rs_files "${l2[@]}") -- "$above_l2"
rule "L3 (the scheduler: runtime/ but the facade, yield_if_busy.rs) imports nothing of L4 (the API)" \
    $(l3_files) -- "$facade"
# The one import circle the layers above would allow inside L3: the
# thread-locals (which L2 reads) and the worker loop (which sets them).
rule "runtime/context.rs does not import the worker (it holds an opaque pointer)" \
    runtime/context.rs -- 'crate::runtime::(scheduler::worker\b|scheduler::\{[^}]*\bworker\b|\{[^}]*\bscheduler::worker\b)'
rule "runtime/compensation/ does not import the worker (spare threads are in runtime/scheduler/worker/)" \
    $(rs_files runtime/compensation) -- 'crate::runtime::(scheduler::worker\b|scheduler::\{[^}]*\bworker\b|\{[^}]*\bscheduler::worker\b)'

if [[ $failed -ne 0 ]]; then
    echo "layers: the imports above break docs/design.md's rules" >&2
    exit 1
fi
echo "layers: ok"
