#!/usr/bin/env bash
# Local git repositories for an offline Zephyr workspace, made from git snapshots.
#
#   scripts/zephyr-mirrors.sh SNAPSHOTS OUT [RESTORE]
#
# SNAPSHOTS: folder with one bare git directory per snapshot, as OWNER+NAME/repo
#            (the list: ../shared/zephyr/README.md).
# OUT:       folder to create: one bare repository per west project, named as the
#            project (a west "name cache": `west update --name-cache OUT`).
# RESTORE:   folder whose zephyr/ files are added to the Zephyr tree (the files the
#            Zephyr snapshot lacks); default ../shared/zephyr/restore next to SNAPSHOTS.
#
# Then, with this repository checked out as nnopt/ in an empty folder (no network):
#
#   west init -l --mf west-offline.yml nnopt
#   west update --name-cache OUT
#
# Each repository has one branch, main, at the commit west-offline.yml resolves:
# - zephyr: the zephyr/ folder of a ZMK workspace snapshot (Zephyr 4.1.0, vendored whole)
#   plus the RESTORE files, as one commit tagged v4.1.0 (west.yml's pin);
# - a module whose commit is whole in its snapshot: that very commit (Zephyr's pin);
# - a module whose commit misses files in its snapshot: the same tree without them, as
#   one commit tagged nnopt-snapshot-<first 12 digits of the upstream commit>.
# Commits are written with fixed names and dates, so the same snapshots give the same
# SHAs on every machine. The repositories are shallow (only that commit's objects) and
# hold their objects (no alternates).
set -euo pipefail

die() { echo "zephyr-mirrors: $1" >&2; [ -z "${2:-}" ] || echo "Hint: $2" >&2; exit 1; }
[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 SNAPSHOTS OUT [RESTORE]" \
    "SNAPSHOTS holds OWNER+NAME/repo git directories, e.g. /work/.mirror"
[ -d "$1" ] || die "no snapshot folder $1" "pass the folder that holds OWNER+NAME/repo"
SNAPSHOTS=$(cd "$1" && pwd)
mkdir -p "$2"; OUT=$(cd "$2" && pwd)
RESTORE=${3:-$(dirname "$SNAPSHOTS")/shared/zephyr/restore}
[ -d "$RESTORE/zephyr" ] || die "no $RESTORE/zephyr (the files the Zephyr snapshot lacks)" \
    "pass the restore folder of ../shared/zephyr as RESTORE"

export GIT_AUTHOR_NAME="nnopt snapshot mirror" GIT_AUTHOR_EMAIL="nnopt@invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"

snapshot() {  # snapshot OWNER+NAME: its git directory, or die naming it
    local dir=$SNAPSHOTS/$1/repo
    [ -d "$dir" ] || die "missing snapshot $1 in $SNAPSHOTS" "fetch github:${1/+//}"
    echo "$dir"
}

# start NAME SNAPSHOT_DIR: a fresh bare repository OUT/NAME that borrows the snapshot's
# objects until finish() copies the ones COMMIT needs.
start() {
    rm -rf "$OUT/$1"
    git init -q --bare --initial-branch=main "$OUT/$1"
    echo "$2/objects" > "$OUT/$1/objects/info/alternates"
}

# finish NAME COMMIT [TAG]: main (and the tag TAG) at COMMIT, objects copied, alternates
# dropped.
finish() {
    local repo=$OUT/$1
    git -C "$repo" update-ref refs/heads/main "$2"
    # Shallow at COMMIT: a snapshot may lack objects of older commits, and a workspace
    # needs only this one (west clones shallow repositories like any other).
    echo "$2" > "$repo/shallow"
    # Annotated, as Zephyr's release tags are: `git describe` (Zephyr's build version,
    # "Booting Zephyr OS build v4.1.0") skips lightweight tags.
    if [ -n "${3:-}" ]; then
        GIT_COMMITTER_DATE=$(git -C "$repo" log -1 --format=%cI "$2") \
            git -C "$repo" tag -f -a -m "$3" "$3" "$2" >/dev/null
    fi
    git -C "$repo" rev-list --objects --all |
        git -C "$repo" pack-objects -q "$repo/objects/pack/pack" >/dev/null
    git -C "$repo" prune-packed
    rm "$repo/objects/info/alternates"
    git -C "$repo" fsck --connectivity-only --no-dangling --no-progress || die "$1: objects missing after repack"
    echo "$1: $(git -C "$repo" rev-parse main)${3:+ (tag $3)}"
}

# commit_tree NAME TREE DATE MESSAGE: a parentless commit of TREE in OUT/NAME.
commit_tree() {
    GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$3" \
        git -C "$OUT/$1" commit-tree "$2" -m "$4"
}

# missing_blobs REPO COMMIT: paths of COMMIT whose contents are not in REPO.
missing_blobs() {
    git -C "$1" ls-tree -r --full-tree "$2" | awk '$2 == "blob" { print $3 }' |
        git -C "$1" cat-file --batch-check='%(objectname) %(objecttype)' |
        awk '$2 == "missing" { print $1 }' | sort -u > "$OUT/.missing-ids"
    git -C "$1" ls-tree -r --full-tree "$2" |
        awk 'NR == FNR { miss[$1] = 1; next } $2 == "blob" && miss[$3] { sub(/^[^\t]*\t/, ""); print }' \
            "$OUT/.missing-ids" -
    rm -f "$OUT/.missing-ids"
}

# module NAME OWNER+NAME COMMIT: COMMIT itself when whole, else its tree without the
# missing files, tagged nnopt-snapshot-<COMMIT>.
module() {
    local name=$1 snap; snap=$(snapshot "$2")
    local commit; commit=$(git -C "$snap" rev-parse --verify -q "$3^{commit}") ||
        die "$name: commit $3 is not in snapshot $2"
    start "$name" "$snap"
    local missing; missing=$(missing_blobs "$snap" "$commit")
    if [ -z "$missing" ]; then
        finish "$name" "$commit"
        return
    fi
    local index=$OUT/$name/nnopt-index tree new
    GIT_INDEX_FILE=$index git -C "$OUT/$name" read-tree "$commit"
    # Mode 0 removes the entry (--force-remove would want a work tree).
    sed 's/^/0 0000000000000000000000000000000000000000\t/' <<< "$missing" |
        GIT_INDEX_FILE=$index git -C "$OUT/$name" update-index --index-info
    tree=$(GIT_INDEX_FILE=$index git -C "$OUT/$name" write-tree)
    rm -f "$index"
    new=$(commit_tree "$name" "$tree" "$(git -C "$snap" log -1 --format=%cI "$commit")" \
        "$name at $commit without the files its snapshot lacks:
$missing")
    finish "$name" "$new" "nnopt-snapshot-${commit:0:12}"
}

# Zephyr 4.1.0: the zephyr/ folder of the ZMK snapshot at e6981722, plus RESTORE/zephyr.
zephyr() {
    local snap; snap=$(snapshot samuelliden+zmk-paw3395-mouse)
    local src=e6981722 index=$OUT/zephyr/nnopt-index tree commit path blob
    start zephyr "$snap"
    GIT_INDEX_FILE=$index git -C "$OUT/zephyr" read-tree "$src:zephyr"
    while IFS= read -r path; do
        blob=$(git -C "$OUT/zephyr" hash-object -w -- "$RESTORE/zephyr/$path")
        GIT_INDEX_FILE=$index git -C "$OUT/zephyr" update-index --add \
            --cacheinfo "100644,$blob,$path"
    done < <(cd "$RESTORE/zephyr" && find . -type f -printf '%P\n' | sort)
    tree=$(GIT_INDEX_FILE=$index git -C "$OUT/zephyr" write-tree)
    rm -f "$index"
    [ "$(git -C "$OUT/zephyr" show "$tree:VERSION" | sed -n 's/^VERSION_MINOR = //p')" = 1 ] ||
        die "zephyr: the snapshot's VERSION is not 4.1"
    commit=$(commit_tree zephyr "$tree" "$(git -C "$snap" log -1 --format=%cI "$src")" \
        "Zephyr 4.1.0: zephyr/ of samuelliden/zmk-paw3395-mouse@$src, plus $(
            cd "$RESTORE/zephyr" && find . -type f | wc -l) files restored from Zephyr")
    finish zephyr "$commit" v4.1.0
}

zephyr
# Zephyr 4.1.0's west.yml pins, except mbedtls and cmsis (pins not in their snapshots:
# their snapshot heads, Mbed TLS 3.6.2 and CMSIS 5.9.0).
module cmsis_6      zephyrproject-rtos+CMSIS_6      783317a3072554acbac86cca2ff24928cbf98d30
module cmsis        zephyrproject-rtos+cmsis        4b96cbb174678dcd3ca86e11e1f24bc5f8726da0
module hal_stm32    zephyrproject-rtos+hal_stm32    55043bcc35fffa3b4a8c75a696d932b5020aad09
module mbedtls      zephyrproject-rtos+mbedtls      a78176c6ff0733ba08018cba4447bd3f20de7978
module picolibc     zephyrproject-rtos+picolibc     82d62ed1ac55b4e34a12d0390aced2dc9af13fc9
module cmsis-nn     zephyrproject-rtos+cmsis-nn     e9328d612ea3ea7d0d210d3ac16ea8667c01abdd
module cmsis-dsp    zephyrproject-rtos+cmsis-dsp    d80a49b2bb186317dc1db4ac88da49c0ab77e6e7
module tflite-micro zephyrproject-rtos+tflite-micro 8d404de73acf7687831e16d88e86e4f73cfddf8e
echo "mirrors ready in $OUT: west update --name-cache $OUT"
