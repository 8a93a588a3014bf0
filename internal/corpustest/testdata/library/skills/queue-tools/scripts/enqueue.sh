#!/bin/sh
# Add a pull request (number or URL) to its base branch's merge queue.
set -eu
if [ $# -ne 1 ]; then
  echo "usage: enqueue.sh <NUMBER|URL>" >&2
  exit 2
fi
id=$(gh pr view "$1" --json id --jq .id)
gh api graphql -F id="$id" -f query='
  mutation($id: ID!) {
    enqueuePullRequest(input: {pullRequestId: $id}) { mergeQueueEntry { position } }
  }' --jq '.data.enqueuePullRequest.mergeQueueEntry.position'
