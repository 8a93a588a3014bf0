#!/bin/sh
# List merge-queue entries of a branch: position, state, pull request.
set -eu
repo="${1:-$(gh repo view --json nameWithOwner --jq .nameWithOwner)}"
branch="${2:-main}"
gh api graphql -F owner="${repo%/*}" -F name="${repo#*/}" -F branch="$branch" -f query='
  query($owner: String!, $name: String!, $branch: String!) {
    repository(owner: $owner, name: $name) {
      mergeQueue(branch: $branch) {
        entries(first: 50) { nodes { position state pullRequest { number title url } } }
      }
    }
  }' --jq '.data.repository.mergeQueue.entries.nodes[] | "\(.position)\t\(.state)\t#\(.pullRequest.number) \(.pullRequest.title)"'
