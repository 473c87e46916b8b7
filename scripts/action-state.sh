#!/usr/bin/env bash
# Keeps the Director's state folder (event buffer, quarantine, cycle intent) between runs on
# ephemeral CI runners, on a branch of its own that is never merged into main.
#
#   action-state.sh restore BRANCH STATE_DIR   before `director run`
#   action-state.sh save    BRANCH STATE_DIR   after it, even when it failed
#
# Run in the repository (cwd), whose `origin` accepts pushes (actions/checkout leaves the
# token in the git config). Each save is one parentless commit holding the whole folder, pushed
# with a lease on the commit restored, so a concurrent writer is refused instead of overwritten
# and the branch never accumulates history. The seal key and the lock never leave the runner:
# the key comes from the ENGRAM_SEAL_KEY secret.
set -euo pipefail

usage() {
  echo "usage: action-state.sh restore|save BRANCH STATE_DIR" >&2
  exit 2
}
[ $# -eq 3 ] || usage
action=$1
branch=$2
state=$3
case "$branch" in
  "" | -* | *..* | *" "* | refs/*) echo "::error::state branch '$branch' is not a plain branch name" >&2; exit 2 ;;
esac
tracking="refs/engram-state/$branch"
lease_file="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/engram-state-lease-${branch//\//_}"

case "$action" in
  restore)
    set +e
    git ls-remote --exit-code --heads origin "refs/heads/$branch" >/dev/null
    found=$?
    set -e
    if [ "$found" -eq 2 ]; then
      echo "engram state: no branch $branch on origin yet; starting with an empty state folder"
      : >"$lease_file"
      exit 0
    fi
    [ "$found" -eq 0 ] || { echo "::error::engram state: cannot list origin (git ls-remote exit $found)" >&2; exit 1; }
    git fetch --quiet --no-tags origin "+refs/heads/$branch:$tracking"
    sha=$(git rev-parse --verify "$tracking^{commit}")
    echo "$sha" >"$lease_file"
    if [ -s "$state/buffer/journal.ndjson" ]; then
      # A persistent runner may hold a newer buffer than the branch: keep it, push it later.
      echo "::warning::engram state: $state already holds a buffer; kept it instead of $branch at ${sha:0:12}"
      exit 0
    fi
    mkdir -p "$state"
    git archive --format=tar "$tracking" | tar -x -C "$state"
    echo "engram state: restored $state from $branch at ${sha:0:12}"
    ;;
  save)
    [ -d "$state" ] || { echo "engram state: no $state folder; nothing to save"; exit 0; }
    lease=""
    [ -f "$lease_file" ] && lease=$(cat "$lease_file")
    index=$(mktemp)
    rm -f "$index"
    trap 'rm -f "$index"' EXIT
    export GIT_INDEX_FILE="$index"
    git read-tree --empty
    git_dir=$(git rev-parse --absolute-git-dir)
    git -C "$state" --git-dir="$git_dir" --work-tree=. add --all --force -- . \
      ':(exclude)seal.key' ':(exclude)director.lock*' ':(exclude)sync/sync.lock*' ':(exclude)*.tmp'
    tree=$(git write-tree)
    unset GIT_INDEX_FILE
    if [ -n "$lease" ] && [ "$(git rev-parse "$lease^{tree}")" = "$tree" ]; then
      echo "engram state: unchanged since ${lease:0:12}; nothing to push"
      exit 0
    fi
    commit=$(
      GIT_AUTHOR_NAME="${ENGRAM_STATE_AUTHOR_NAME:-github-actions[bot]}" \
        GIT_AUTHOR_EMAIL="${ENGRAM_STATE_AUTHOR_EMAIL:-41898283+github-actions[bot]@users.noreply.github.com}" \
        GIT_COMMITTER_NAME="${ENGRAM_STATE_AUTHOR_NAME:-github-actions[bot]}" \
        GIT_COMMITTER_EMAIL="${ENGRAM_STATE_AUTHOR_EMAIL:-41898283+github-actions[bot]@users.noreply.github.com}" \
        git commit-tree "$tree" -m "engram state${GITHUB_RUN_ID:+ after run $GITHUB_RUN_ID}"
    )
    git push --quiet --force-with-lease="refs/heads/$branch:$lease" origin "$commit:refs/heads/$branch"
    echo "$commit" >"$lease_file"
    echo "engram state: saved $state to $branch at ${commit:0:12}"
    ;;
  *) usage ;;
esac
