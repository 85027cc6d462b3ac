#!/usr/bin/env bash
# Renews the locks of the test environments: the one way they change.
#
#     scripts/lock-test-envs.sh                  # every lock, keeping the versions it can
#     scripts/lock-test-envs.sh math inspect     # those two
#     scripts/lock-test-envs.sh --upgrade hud    # hud's, every dependency at its newest
#     scripts/lock-test-envs.sh azurite          # Azurite's package-lock.json
#
# Each Python environment the tests make has a requirements file `tests/envs/NAME.in` (what it is
# for and what it pins by hand) and a lock `tests/envs/NAME.txt` written from it by uv (`uv pip
# compile --generate-hashes`, for CPython 3.11 on Linux x86-64, the machines' Python): every
# transitive version with the hashes of all its files. A `# compile: FLAGS` line in the `.in`
# file adds flags (verifiers' `--no-deps`). `tests/envs/build.txt` pins the build backends of
# packages PyPI has only as source. The tests install a lock with `pip --require-hashes
# --no-deps` and make an environment again when its lock changes (tests/src/python.rs);
# Azurite is installed with `npm ci` from `tests/envs/azurite/package-lock.json`.
#
# Without --upgrade, uv keeps each version the lock already has unless the `.in` file asks for
# another; with it, every unpinned dependency moves to its newest release. uv itself is pinned
# in tests/envs/tools/uv.txt and installed under target/lock-tools. Commit the changed locks
# with the test run that shows them green.
set -euo pipefail
cd "$(dirname "$0")/.."

upgrade=()
names=()
for arg in "$@"; do
    case "$arg" in
        --upgrade) upgrade=(--upgrade --refresh) ;;
        -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $arg (see --help)" >&2; exit 2 ;;
        *) names+=("$arg") ;;
    esac
done
if [ ${#names[@]} -eq 0 ]; then
    for file in tests/envs/*.in; do names+=("$(basename "$file" .in)"); done
    names+=(azurite)
fi

tools=target/lock-tools
if ! cmp -s tests/envs/tools/uv.txt "$tools/uv.txt" || [ ! -x "$tools/venv/bin/uv" ]; then
    rm -rf "$tools"
    mkdir -p "$tools"
    python3 -m venv "$tools/venv"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --no-deps \
        -r tests/envs/tools/uv.txt
    cp tests/envs/tools/uv.txt "$tools/uv.txt"
fi
uv="$PWD/$tools/venv/bin/uv"

for name in "${names[@]}"; do
    if [ "$name" = azurite ]; then
        echo "== azurite (npm)"
        (
            cd tests/envs/azurite
            if [ ${#upgrade[@]} -gt 0 ]; then rm -f package-lock.json; fi
            npm install --package-lock-only --ignore-scripts --no-audit --no-fund --loglevel=error
        )
        continue
    fi
    if [ ! -f "tests/envs/$name.in" ]; then
        echo "no tests/envs/$name.in" >&2
        exit 2
    fi
    echo "== $name"
    read -r -a flags <<<"$(sed -n 's/^# compile: //p' "tests/envs/$name.in")"
    (
        cd tests/envs
        "$uv" pip compile "$name.in" -o "$name.txt" --quiet --generate-hashes \
            --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
            --custom-compile-command "scripts/lock-test-envs.sh $name" \
            "${flags[@]}" "${upgrade[@]}"
    )
done
