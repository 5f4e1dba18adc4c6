# kv_port (wait for a started `kv` server's port) is defined in
# scripts/lib/bench.sh, with the other benchmark helpers; sourcing this
# file by its own name still defines it.
# shellcheck source=lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/bench.sh"
