"""GitHub integration for `coderefine review`: the Actions context, the REST API, the PR diff."""

MAX_COMMENTS = 30  # most suggestions in one review (issue 7); the rest are listed in the summary comment
