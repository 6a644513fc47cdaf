"""The `openai` provider end to end: the real CLI and the real `openai` client against a loopback server
that speaks the OpenAI API (tests/openai_server.py), records every request and injects faults."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from coderefine.errors import ExitCode
from tests.conftest import run_cli
from tests.openai_server import OpenAIServer, Reply, fault

KEY = "sk-test-0123456789abcdef"

SUM_MODULE = """
def total(n):
    s = 0
    for i in range(n):
        s += i
    return s
"""
SUM_TESTS = """
from mod import total


def test_total():
    assert total(0) == 0
    assert total(10) == 45
    for n in (20000, 30000, 40000):
        assert total(n) == n * (n - 1) // 2
"""
FAST_SUM = "def total(n):\n    return n * (n - 1) // 2 if n > 0 else 0\n"
WRONG_SUM = "def total(n):\n    return n * n\n"

EVENS_MODULE = """
def f(a):
    r = []
    for i in range(len(a)):
        if a[i] % 2 == 0:
            r.append(a[i] * 2)
    return r
"""
EVENS_TESTS = (
    "from mod import f\n\n\ndef test_f():\n    assert f([1, 2, 3, 4]) == [4, 8]\n    assert f([]) == []\n"
    "    assert f([5, 6]) == [12]\n"
)
CLEAN_EVENS = (
    'def f(a):\n    """Double the even numbers of `a`, in order."""\n'
    "    return [value * 2 for value in a if value % 2 == 0]\n"
)


def python(code: str) -> str:
    return f"Here you go:\n\n```python\n{code}```\n\nThis avoids the index loop."


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    server = OpenAIServer(api_key=KEY).start()
    yield server
    server.stop()


@pytest.fixture
def run_openai(server: OpenAIServer, tmp_path: Path):
    """Run the CLI against the server; returns (process, report). The key comes from the environment."""

    def run(task: str, file: Path, *options: str | Path, env: dict[str, str] | None = None, expect: int = 0):
        report = tmp_path / "report.json"
        report.unlink(missing_ok=True)
        proc = run_cli(
            task,
            file,
            "--base-url",
            server.url,
            "--model",
            "test-model",
            "--cache-dir",
            tmp_path / "cache",
            "--report",
            report,
            "--sandbox",
            "process",  # these tests are about the provider: no container start per run
            *options,
            env={"OPENAI_API_KEY": KEY, **(env or {})},
        )
        assert proc.returncode == expect, proc.stdout + proc.stderr
        assert KEY not in proc.stdout + proc.stderr + report.read_text()  # the key is never shown
        return proc, json.loads(report.read_text())

    return run


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
def test_optimize_run_sends_model_parameters_history_and_facts(server, run_openai, make_project):
    root = make_project({"mod.py": SUM_MODULE, "test_mod.py": SUM_TESTS})
    server.queue(
        Reply(python(FAST_SUM), usage={"prompt_tokens": 310, "completion_tokens": 40}),
        Reply("In `total`, line 1: the formula is right; nothing else is slow.\nVERDICT: CONTINUE"),
        Reply(python(WRONG_SUM)),
        Reply("`total` now returns n*n: wrong for every n. Go back to attempt 0.\nVERDICT: STOP"),
    )
    # 2 pairs a series (4 timed, not 6): the closed form is ~40,000x faster than the loop
    proc, report = run_openai("optimize", root / "mod.py", "--temperature", "0.2", "--seed", "7", "--timing-pairs", "2")

    # The key in the environment chose the provider, and the console says so.
    assert report["provider"] == "openai" and report["provider_reason"] == "OPENAI_API_KEY is set"
    assert f"provider: openai (model test-model at {server.url}) - OPENAI_API_KEY is set" in proc.stdout

    # A preflight listing, then the four calls of the loop, each with the model and sampling parameters.
    assert server.requests[0].path == "/v1/models"
    chats = server.chat_requests()
    assert len(chats) == 4
    for request in chats:
        assert request.headers["authorization"] == f"Bearer {KEY}"
        assert request.body["model"] == "test-model"
        assert request.body["temperature"] == 0.2 and request.body["seed"] == 7
        assert request.body["messages"][0]["role"] == "system"
    generate, feedback, refine, feedback2 = server.prompts()
    assert "for i in range(n):" in generate and "calls to the target were recorded" in generate
    # The feedback step sees the candidate and what executing it showed.
    assert "n * (n - 1) // 2" in feedback and "Tests: 1 passed, 0 failed" in feedback and "Speed:" in feedback
    # The refine step sees the whole history: attempt 0's code, its facts and the feedback on it.
    assert "### Attempt 0 (generate)" in refine and "n * (n - 1) // 2" in refine
    assert "Verdict: ACCEPTED" in refine and "the formula is right" in refine
    assert "Tests: 0 passed, 1 failed" in feedback2 and "return n * n" in feedback2

    assert report["status"] == "improved" and report["best"]["iteration"] == 0
    assert report["iterations"][1]["verdict"] == "rejected"
    assert report["stop_reason"] == "feedback: nothing left to improve"
    assert report["llm"]["calls"] == 4
    assert report["llm"]["prompt_tokens"] == 310 + 3 * 100 and report["llm"]["completion_tokens"] == 40 + 3 * 20
    assert report["llm"]["cached_calls"] == 0 and report["llm"]["model"] == f"model test-model at {server.url}"
    assert "4 model calls, 710 tokens" in " ".join(proc.stdout.split())  # the status line may wrap


# Not timed: what the prompts carry that was measured (the tests' duration, scores) is masked in the cache's
# key, so the repeated run hits the cache on a busy machine too.
@pytest.mark.slow
def test_a_repeated_run_costs_nothing_and_no_cache_bypasses_it(server, run_openai, make_project):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    answers = (python(CLEAN_EVENS), "Clear now.\nVERDICT: STOP")
    server.queue(*answers)
    _, first = run_openai("readability", root / "mod.py")
    assert len(server.chat_requests()) == 2 and first["llm"]["cached_calls"] == 0

    proc, second = run_openai("readability", root / "mod.py")
    assert len(server.chat_requests()) == 2  # nothing new reached the server
    assert second["llm"]["calls"] == 2 and second["llm"]["cached_calls"] == 2 and second["llm"]["billed_tokens"] == 0
    assert [it["reason"] for it in second["iterations"]] == [it["reason"] for it in first["iterations"]]
    assert "2 model calls (2 cached)" in proc.stdout

    server.queue(*answers)
    _, third = run_openai("readability", root / "mod.py", "--no-cache")
    assert len(server.chat_requests()) == 4 and third["llm"]["cached_calls"] == 0

    # Another temperature is another request: not served from the cache.
    server.queue(*answers)
    run_openai("readability", root / "mod.py", "--temperature", "0.9")
    assert len(server.chat_requests()) == 6


@pytest.mark.slow
def test_a_base_url_alone_selects_openai_for_a_local_server(tmp_path, make_project):
    local = OpenAIServer(api_key=None, models=("llama3",)).start()  # like Ollama: no key needed
    try:
        root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
        local.queue(python(CLEAN_EVENS), "VERDICT: STOP")
        report = tmp_path / "r.json"
        proc = run_cli(
            "readability",
            root / "mod.py",
            "--report",
            report,
            "--no-cache",
            env={"CODEREFINE_BASE_URL": local.url, "CODEREFINE_MODEL": "llama3"},
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        data = json.loads(report.read_text())
        assert data["provider"] == "openai" and data["provider_reason"] == "base_url is set (CODEREFINE_BASE_URL)"
        assert [r.body["model"] for r in local.chat_requests()] == ["llama3", "llama3"]
    finally:
        local.stop()


@pytest.mark.slow
def test_without_key_or_base_url_the_default_is_offline(cli, make_project):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    proc = cli("readability", root / "mod.py", "--max-iterations", "1")
    assert proc.returncode == 0, proc.stderr
    assert "provider: offline - no model configured; set OPENAI_API_KEY or base_url to use one" in proc.stdout


def test_a_rejected_key_fails_before_the_baseline(server, run_openai, make_project):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    proc, report = run_openai(
        "readability",
        root / "mod.py",
        env={"OPENAI_API_KEY": "sk-wrong-000000000000"},
        expect=ExitCode.PROVIDER_REJECTED,
    )
    assert proc.stderr.strip().splitlines() == [
        f"error: {server.url} rejected the API key from OPENAI_API_KEY (401): Incorrect API key provided; check the key"
    ]
    assert "sk-wrong-000000000000" not in proc.stdout + proc.stderr
    assert server.chat_requests() == [] and report["baseline"] is None  # no test run was spent on it
    assert report["error"]["kind"] == "provider_rejected"


@pytest.mark.slow
def test_an_unknown_model_is_a_settings_error(server, run_openai, make_project):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    server.queue(fault(404, "The model `gpt-9` does not exist"))
    proc, report = run_openai("readability", root / "mod.py", "--model", "gpt-9", expect=ExitCode.PROVIDER_REJECTED)
    assert "got 404: The model `gpt-9` does not exist; check the model name 'gpt-9'" in proc.stderr
    assert any("'gpt-9' is not among the models" in w for w in report["warnings"])


@pytest.mark.slow
def test_transient_errors_are_retried_with_backoff(server, run_openai, make_project):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    server.queue(fault(429, "slow down"), fault(503, "overloaded"), python(CLEAN_EVENS), "VERDICT: STOP")
    _, report = run_openai("readability", root / "mod.py", "--max-retries", "2")
    assert len(server.chat_requests()) == 4  # the generate request three times, then the feedback
    assert report["llm"]["calls"] == 2 and report["iterations"][0]["evaluated"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("replies", "options", "message"),
    [
        (
            [fault(500, "boom"), fault(500, "boom")],
            ["--max-retries", "1"],
            "failed the generate request with HTTP 500 after 1 retry: boom",
        ),
        ([fault(429, "quota")], ["--max-retries", "0"], "kept rate-limiting the generate request (429): quota"),
        (
            [Reply("late", delay=3)],
            ["--max-retries", "0", "--request-timeout", "0.5"],
            "did not answer the generate request within 0.5s",
        ),
        (
            [Reply(hang_up=True)],
            ["--max-retries", "0"],
            "closed the connection during the generate request without answering",
        ),
        ([Reply(raw=b"<html>proxy error</html>")], [], "with a body that is not JSON"),
        ([Reply(raw=b'{"object": "chat.completion", "choices": []}')], [], "JSON that is not a chat completion"),
    ],
    ids=["500-after-retries", "429", "slow", "hang-up", "not-json", "no-choices"],
)
def test_endpoint_failures_end_with_one_line_and_the_provider_exit_code(
    server, run_openai, make_project, replies, options, message
):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    before = (root / "mod.py").read_text()
    server.queue(*replies)
    proc, report = run_openai("readability", root / "mod.py", "--write", *options, expect=ExitCode.PROVIDER)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert report["error"]["kind"] == "provider" and (root / "mod.py").read_text() == before


def test_an_unreachable_endpoint_fails_fast(make_project, tmp_path):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    closed = OpenAIServer()
    url = closed.url
    closed.stop()  # the port is free again: nothing answers there
    proc = run_cli("readability", root / "mod.py", "--base-url", url, "--max-retries", "0", env={"OPENAI_API_KEY": KEY})
    assert proc.returncode == ExitCode.PROVIDER, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"error: cannot connect to {url}") and len(proc.stderr.strip().splitlines()) == 1
    assert "baseline" not in proc.stdout


@pytest.mark.slow
def test_unusable_answers_become_rejected_candidates_the_feedback_sees(server, run_openai, make_project, tmp_path):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    usage_example = "```python\nprint(f([1, 2]))\n```\n\n```python\n" + CLEAN_EVENS + "```"
    server.queue(
        "I would use a list comprehension here, it reads better.",  # prose, no code
        "Answer with code.\nVERDICT: CONTINUE",
        "```javascript\nconst f = a => a.filter(x => x % 2 === 0).map(x => 2 * x);\n```",  # wrong language
        "Python, please.\nVERDICT: CONTINUE",
        Reply("```python\ndef f(a):\n    return [value * 2 for value", finish_reason="length"),  # cut off
        "It was cut off; answer shorter.\nVERDICT: CONTINUE",
        usage_example,  # a usage example first, then the code
    )
    _, report = run_openai("readability", root / "mod.py", "--max-iterations", "4", "--trace", tmp_path / "trace")
    reasons = [it["reason"] for it in report["iterations"]]
    assert "no code block, and as a whole it is not Python" in reasons[0]
    assert "code marked 'javascript', not Python" in reasons[1]
    assert "cut off at the model's length limit" in reasons[2]
    assert report["iterations"][3]["evaluated"]
    assert "the answer had 2 Python code blocks; block 2 was used" in report["iterations"][3]["notes"][0]
    assert report["status"] in ("improved", "unchanged")  # whichever: the last answer was judged by running it

    prompts = server.prompts()
    # Each feedback step is told why the answer was rejected; the last refine sees all three reasons.
    assert "no code block" in prompts[1] and "not Python" in prompts[3]
    assert all(reason in prompts[6] for reason in ("no code block", "'javascript'", "length limit"))


@pytest.mark.slow
def test_call_and_token_budgets(server, run_openai, make_project):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    server.queue(python(CLEAN_EVENS))
    proc, report = run_openai("readability", root / "mod.py", "--max-calls", "1")
    assert report["stop_reason"] == "call budget exhausted (1 calls)" and report["llm"]["calls"] == 1
    assert "1 model call, 120 tokens" in proc.stdout

    server.queue(Reply(python(CLEAN_EVENS), usage={"prompt_tokens": 900, "completion_tokens": 60}))
    _, report = run_openai("readability", root / "mod.py", "--max-tokens", "1000", "--no-cache")
    assert report["llm"]["calls"] == 1 and report["llm"]["total_tokens"] == 960
    assert report["stop_reason"].startswith("token budget: the next prompt (~")
    assert len(server.chat_requests()) == 2  # the feedback request was never sent


@pytest.mark.slow
def test_history_beyond_the_context_budget_is_left_out_and_the_trace_says_so(
    server, run_openai, make_project, tmp_path
):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    padding = "\n".join(f"    # step {i}: keep the comprehension readable and the names clear" for i in range(40))

    def broken(k: int) -> str:  # fails the tests fast; each one long enough to fill the budget
        return python(f"def f(a):\n{padding}\n    return [{k}]\n")

    server.queue(broken(0), "No.\nVERDICT: CONTINUE", broken(1), "No.\nVERDICT: CONTINUE", broken(2))
    server.queue("No.\nVERDICT: CONTINUE", broken(3))
    trace = tmp_path / "trace"
    _, report = run_openai(
        "readability", root / "mod.py", "--context-tokens", "2500", "--max-iterations", "4", "--trace", trace
    )
    assert len(report["iterations"]) == 4
    last_refine = json.loads(sorted(trace.glob("*-refine.json"))[-1].read_text())
    omitted = last_refine["request"]["omitted_attempts"]
    assert omitted and 2 not in omitted  # the most recent attempt always stays
    prompt = last_refine["request"]["messages"][-1]["content"]
    assert "left out to fit the context budget" in prompt and "### Attempt 2 (refine)" in prompt
    assert "### Attempt 0 (generate)" not in prompt and "def f(a):\n    r = []" in prompt  # the original stays
    first_refine = json.loads(sorted(trace.glob("*-refine.json"))[0].read_text())
    assert first_refine["request"]["omitted_attempts"] == []


@pytest.mark.slow
def test_a_traced_run_replays_without_the_model(server, run_openai, make_project, tmp_path):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    server.queue(python(CLEAN_EVENS), "Names are clear now.\nVERDICT: STOP")
    trace = tmp_path / "trace"
    _, original = run_openai("readability", root / "mod.py", "--temperature", "0", "--trace", trace)
    first = json.loads((trace / "001-generate.json").read_text())
    assert first["request"]["parameters"] == {"model": "test-model", "temperature": 0.0}
    assert first["reply"]["usage"] == {"prompt_tokens": 100, "completion_tokens": 20} and not first["reply"]["cached"]
    server.stop()  # the replay must not need it

    replay_report = tmp_path / "replay.json"
    proc = run_cli("replay", trace, "--report", replay_report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    replayed = json.loads(replay_report.read_text())
    assert replayed["provider"] == "scripted" and replayed["file"] == str((root / "mod.py").resolve())
    assert [(it["code_sha256"], it["verdict"]) for it in replayed["iterations"]] == [
        (it["code_sha256"], it["verdict"]) for it in original["iterations"]
    ]
    assert replayed["stop_reason"] == original["stop_reason"] and replayed["llm"]["calls"] == 2

    (root / "mod.py").write_text(EVENS_MODULE + "\n# edited since\n")
    proc = run_cli("replay", trace, "--report", replay_report)
    assert "changed since the trace was made" in proc.stdout


@pytest.mark.parametrize(
    ("make", "message"),
    [(lambda tmp: tmp / "missing", "no such trace folder"), (lambda tmp: tmp, "not a trace folder")],
    ids=["missing", "not-a-trace"],
)
def test_replay_of_something_that_is_not_a_trace(tmp_path, make, message):
    proc = run_cli("replay", make(tmp_path))
    assert proc.returncode == ExitCode.BAD_SCRIPT and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_failure_mid_run_keeps_what_was_verified_in_view(server, run_openai, make_project):
    root = make_project({"mod.py": EVENS_MODULE, "test_mod.py": EVENS_TESTS})
    before = (root / "mod.py").read_text()
    server.queue(python(CLEAN_EVENS), fault(500, "gone"))
    proc, report = run_openai("readability", root / "mod.py", "--max-retries", "0", "--write", expect=ExitCode.PROVIDER)
    assert "failed the feedback request with HTTP 500: gone" in proc.stderr
    assert len(report["iterations"]) == 1 and report["iterations"][0]["evaluated"]  # reported, not lost
    assert "trajectory" in proc.stdout
    assert (root / "mod.py").read_text() == before  # an interrupted run writes nothing
