"""A small client for the GitHub REST endpoints `review` uses, on `requests`.

Six endpoints do not justify a full SDK; `requests` (already installed with the Docker client) gives
sessions, timeouts, retries and Link-header pagination. The token goes only into the Authorization
header: no message built here ever contains it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from coderefine import __version__
from coderefine.errors import GitHubApiError

API_VERSION = "2022-11-28"
PER_PAGE = 100  # GitHub's largest page


class ReadOnlyToken(GitHubApiError):
    """403 on a write: the token may read but not comment (fork pull requests, restrictive permissions)."""


class Unprocessable(GitHubApiError):
    """422: GitHub refused the content, e.g. a review comment on a line outside the diff."""


class GitHubClient:
    def __init__(self, api_url: str, token: str, timeout: float = 30.0) -> None:
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": f"coderefine/{__version__}",
            }
        )
        # Reads are retried on a flaky gateway; writes are not (a retried POST could comment twice).
        retry = Retry(total=2, backoff_factor=0.5, status_forcelist=(502, 503, 504), allowed_methods={"GET"})
        self.session.mount(self.api_url, HTTPAdapter(max_retries=retry))

    def close(self) -> None:
        self.session.close()

    def _request(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        where = f"{method} {url.removeprefix(self.api_url).split('?')[0]}"
        try:
            response = self.session.request(method, url, timeout=self.timeout, **kwargs)
        except requests.RequestException as exc:
            raise GitHubApiError(f"GitHub API: {where} failed: {type(exc).__name__}") from None
        if response.status_code < 400:
            return response
        try:
            message = str(response.json().get("message", ""))
        except ValueError:
            message = response.text[:200]
        text = f"GitHub API: {where} answered {response.status_code}" + (f": {message}" if message else "")
        if response.status_code == 403 and method != "GET" and "rate limit" not in message.lower():
            raise ReadOnlyToken(text)
        if response.status_code == 422:
            raise Unprocessable(text)
        raise GitHubApiError(text)

    def get_all(self, path: str) -> Iterator[Any]:
        """Every item of a paginated list, following the Link header's `next`."""
        url: str | None = f"{self.api_url}{path}?per_page={PER_PAGE}"
        while url is not None:
            response = self._request("GET", url)
            items = response.json()
            if not isinstance(items, list):
                raise GitHubApiError(f"GitHub API: GET {path} did not answer a list")
            yield from items
            url = response.links.get("next", {}).get("url")

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._request("POST", f"{self.api_url}{path}", json=body).json()

    def patch(self, path: str, body: dict[str, Any]) -> Any:
        return self._request("PATCH", f"{self.api_url}{path}", json=body).json()
