"""A loopback HTTP server that plays the GitHub REST API for the endpoints `coderefine review` uses.

It holds one repository's pull requests (files with their patch hunks, reviews, issue comments), checks
every request against the documented fields (method and path, the `Bearer`/`token` authorization, the
`Accept` and `X-GitHub-Api-Version` headers when sent, required body fields and their types, the
commit of a review, and that review comments lie on lines of the diff, a multi-line one within one
hunk), records them, serves lists in pages with a Link header, and can answer 403 to writes (a
read-only token) or any status to a route. A request that breaks the documented contract is answered
422 like GitHub would, and listed in `violations` so a test can insist there are none.

Documented at docs.github.com/en/rest: pulls#list-pull-requests-files, pulls/reviews#create-a-review-
for-a-pull-request, pulls/reviews#list-reviews-for-a-pull-request, issues/comments (list, create,
update).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ACCEPTED_MEDIA = ("application/vnd.github+json", "application/json", "*/*")
API_VERSIONS = ("2022-11-28",)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int = 0


@dataclass
class PullRequestState:
    head_sha: str
    files: list[dict[str, Any]]  # {"filename", "status", "patch"}: patch as git prints it, from the first @@
    reviews: list[dict[str, Any]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)  # the issue comments


def hunk_ranges(patch: str) -> list[tuple[int, int]]:
    """The head-side line ranges the patch shows: the lines a review comment may be placed on."""
    ranges = []
    for match in _HUNK.finditer(patch):
        start, length = int(match.group(1)), int(match.group(2) or 1)
        if length:
            ranges.append((start, start + length - 1))
    return ranges


class GitHubServer:
    def __init__(self, owner: str = "octo", repo: str = "demo", token: str = "ghs_test_token_0123456789") -> None:
        self.owner, self.repo, self.token = owner, repo, token
        self.pulls: dict[int, PullRequestState] = {}
        self.requests: list[Recorded] = []
        self.violations: list[str] = []
        self.read_only = False  # 403 to every write, as for a fork's token
        self.faults: dict[tuple[str, str], int] = {}  # (method, path regex) -> status to answer
        self.max_per_page = 100
        self._next_id = 1000
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- test API

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_pull(self, number: int, head_sha: str, files: list[dict[str, Any]]) -> PullRequestState:
        self.pulls[number] = PullRequestState(head_sha, files)
        return self.pulls[number]

    def add_comment(self, number: int, body: str, login: str = "someone") -> dict[str, Any]:
        comment = {"id": self._new_id(), "body": body, "user": {"login": login, "type": "User"}}
        self.pulls[number].comments.append(comment)
        return comment

    def writes(self) -> list[Recorded]:
        return [r for r in self.requests if r.method in ("POST", "PATCH")]

    def start(self) -> GitHubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    # -- the contract

    def _check_review(self, pull: PullRequestState, body: Any) -> list[str]:
        problems: list[str] = []
        if not isinstance(body, dict):
            return ["the review body is not a JSON object"]
        if body.get("event") not in ("COMMENT", "APPROVE", "REQUEST_CHANGES"):
            problems.append(f"event must be COMMENT, APPROVE or REQUEST_CHANGES, not {body.get('event')!r}")
        if body.get("commit_id") != pull.head_sha:
            problems.append(f"commit_id {body.get('commit_id')!r} is not the head {pull.head_sha}")
        if not isinstance(body.get("body", ""), str):
            problems.append("body must be a string")
        comments = body.get("comments", [])
        if not isinstance(comments, list):
            return [*problems, "comments must be an array"]
        patches = {f["filename"]: f.get("patch") or "" for f in pull.files}
        for index, comment in enumerate(comments):
            where = f"comments[{index}]"
            if not isinstance(comment, dict):
                problems.append(f"{where} is not an object")
                continue
            for name, kind in (("path", str), ("body", str), ("line", int)):
                if not isinstance(comment.get(name), kind) or isinstance(comment.get(name), bool):
                    problems.append(f"{where}.{name} must be a {kind.__name__}")
            if "position" in comment:
                problems.append(f"{where}: use line/side, not the deprecated position")
            for name in ("side", "start_side"):
                if name in comment and comment[name] not in ("LEFT", "RIGHT"):
                    problems.append(f"{where}.{name} must be LEFT or RIGHT")
            start = comment.get("start_line")
            if start is not None and (not isinstance(start, int) or not isinstance(comment.get("line"), int)):
                problems.append(f"{where}.start_line must be an integer")
                continue
            if start is not None and start >= comment["line"]:
                problems.append(f"{where}.start_line must precede line")
            if comment.get("path") not in patches:
                problems.append(f"{where}.path {comment.get('path')!r} is not part of the pull request")
                continue
            if not isinstance(comment.get("line"), int):
                continue
            first, last = start if start is not None else comment["line"], comment["line"]
            if not any(low <= first and last <= high for low, high in hunk_ranges(patches[comment["path"]])):
                problems.append(
                    f"{where}: lines {first}-{last} of {comment['path']} are not in one hunk of the diff "
                    "(GitHub: 'Line could not be resolved' / 'start_line must be part of the same hunk')"
                )
        return problems

    # -- HTTP

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any, **headers: str) -> None:
                data = json.dumps(payload).encode()
                server.requests[-1].status = status
                self.send_response(status)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _refuse(self, status: int, message: str) -> None:
                self._send(status, {"message": message, "documentation_url": "https://docs.github.com/rest"})

            def _violation(self, message: str) -> None:
                server.violations.append(f"{self.command} {urlsplit(self.path).path}: {message}")
                self._refuse(422, message)

            def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]], path: str) -> None:
                per_page = min(int(query.get("per_page", ["30"])[0]), server.max_per_page)
                page = int(query.get("page", ["1"])[0])
                last = max(1, -(-len(items) // per_page))
                headers = {}
                if page < last:
                    base = f"{server.url}{path}?per_page={per_page}"
                    headers["link"] = f'<{base}&page={page + 1}>; rel="next", <{base}&page={last}>; rel="last"'
                self._send(200, items[(page - 1) * per_page : page * per_page], **headers)

            def _dispatch(self, body: Any) -> None:
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append(Recorded(self.command, parts.path, query, headers, body))
                auth = headers.get("authorization", "")
                if auth not in (f"Bearer {server.token}", f"token {server.token}"):
                    self._refuse(401, "Bad credentials")
                    return
                if "accept" in headers and not any(m in headers["accept"] for m in ACCEPTED_MEDIA):
                    self._violation(f"Accept {headers['accept']!r} is not a GitHub media type")
                    return
                version = headers.get("x-github-api-version")
                if version is not None and version not in API_VERSIONS:
                    self._violation(f"X-GitHub-Api-Version {version!r} is not supported")
                    return
                for (method, pattern), status in server.faults.items():
                    if method == self.command and re.search(pattern, parts.path):
                        self._refuse(status, "Server Error" if status >= 500 else "injected")
                        return
                if self.command in ("POST", "PATCH") and server.read_only:
                    self._refuse(403, "Resource not accessible by integration")
                    return
                self._route(parts.path, query, body)

            def _route(self, path: str, query: dict[str, list[str]], body: Any) -> None:
                prefix = f"/repos/{server.owner}/{server.repo}"
                match = re.fullmatch(rf"{prefix}/(pulls|issues)/(\d+)/(files|reviews|comments)", path)
                edit = re.fullmatch(rf"{prefix}/issues/comments/(\d+)", path)
                if match and int(match.group(2)) in server.pulls:
                    pull = server.pulls[int(match.group(2))]
                    kind = (match.group(1), match.group(3), self.command)
                    if kind == ("pulls", "files", "GET"):
                        self._page(pull.files, query, path)
                    elif kind == ("pulls", "reviews", "GET"):
                        self._page(pull.reviews, query, path)
                    elif kind == ("pulls", "reviews", "POST"):
                        problems = server._check_review(pull, body)
                        if problems:
                            self._violation("; ".join(problems))
                            return
                        review = {"id": server._new_id(), "body": body.get("body", ""), "state": "COMMENTED"}
                        review["commit_id"], review["comments"] = body["commit_id"], body.get("comments", [])
                        pull.reviews.append(review)
                        self._send(200, review)
                    elif kind == ("issues", "comments", "GET"):
                        self._page(pull.comments, query, path)
                    elif kind == ("issues", "comments", "POST"):
                        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                            self._violation("body must be a string")
                            return
                        comment = {
                            "id": server._new_id(),
                            "body": body["body"],
                            "user": {"login": "github-actions[bot]"},
                        }
                        pull.comments.append(comment)
                        self._send(201, comment)
                    else:
                        self._refuse(404, "Not Found")
                elif edit and self.command == "PATCH":
                    found = [c for p in server.pulls.values() for c in p.comments if c["id"] == int(edit.group(1))]
                    if not found:
                        self._refuse(404, "Not Found")
                    elif not isinstance(body, dict) or not isinstance(body.get("body"), str):
                        self._violation("body must be a string")
                    else:
                        found[0]["body"] = body["body"]
                        self._send(200, found[0])
                else:
                    self._refuse(404, "Not Found")

            def do_GET(self) -> None:
                with server._lock:
                    self._dispatch(None)

            def _with_body(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                with server._lock:
                    try:
                        body = json.loads(raw or b"null")
                    except ValueError:
                        server.requests.append(Recorded(self.command, self.path, {}, {}, raw))
                        self._violation("Problems parsing JSON")
                        return
                    self._dispatch(body)

            do_POST = _with_body
            do_PATCH = _with_body

        return Handler
