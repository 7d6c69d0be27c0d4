#!/usr/bin/env bash
# Fuzzes the protocol layer for SECONDS seconds per target, on the stable
# toolchain (cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP=1 allows them).
#
#   fuzz/run.sh SECONDS [TARGET...]     (default targets: decode roundtrip)
#
# Extra libFuzzer options go in FUZZ_ARGS, e.g. FUZZ_ARGS=-max_len=4096 for
# many more (smaller) inputs per second than the transcript seeds' 250 KB.
#
# Seeds: every recorded transcript (*.bin) under
# tmux-control/tests/fixtures/control-mode (or $TMUX_CONTROL_FIXTURES), copied into
# fuzz/corpus/<target>/ (git-ignored), plus the saved regressions and
# whatever earlier runs left there. A crash stops that target (the others
# still run, and the script exits 1) and leaves the input in
# fuzz/artifacts/<target>/; minimise it with
#   RUSTC_BOOTSTRAP=1 cargo fuzz tmin -s none <target> <artifact>
# and keep the result in fuzz/regressions/, which the test suite replays.
# Needs cargo-fuzz: cargo install cargo-fuzz --locked
set -euo pipefail

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
    echo "usage: $0 SECONDS [TARGET...]" >&2
    exit 2
fi
seconds=$1
shift
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(decode roundtrip)
fi

fuzz_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$fuzz_dir")
fixtures_in=${TMUX_CONTROL_FIXTURES:-$root/tmux-control/tests/fixtures/control-mode}
fixtures=$(cd "$fixtures_in" 2>/dev/null && pwd) || {
    echo "error: fixture folder $fixtures_in is missing (set TMUX_CONTROL_FIXTURES)" >&2
    exit 1
}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "error: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
    exit 1
fi

read -r -a extra <<<"${FUZZ_ARGS:-}"
export RUSTC_BOOTSTRAP=1
cd "$root"
failed=()
for target in "${targets[@]}"; do
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    copied=0
    while IFS= read -r -d '' bin; do
        rel=${bin#"$fixtures"/}
        cp -f "$bin" "$corpus/fixture-${rel//\//-}"
        copied=$((copied + 1))
    done < <(find "$fixtures" -name '*.bin' -type f -print0)
    if [[ -d fuzz/regressions ]]; then
        find fuzz/regressions -type f ! -name 'README*' -exec cp -f {} "$corpus/" \;
    fi
    echo "== $target: $copied fixture seeds, $(find "$corpus" -type f | wc -l) corpus files, ${seconds}s" >&2
    if ! cargo fuzz run -s none "$target" "$corpus" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 ${extra[@]+"${extra[@]}"}; then
        failed+=("$target")
    fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "== FAILED: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "== no failure in ${targets[*]}" >&2
