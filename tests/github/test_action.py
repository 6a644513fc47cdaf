"""action.yml and the example workflow agree with each other and with the CLI they run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import typer.main
import yaml

from coderefine.cli.app import app
from coderefine.setting_specs import SPEC_BY_NAME
from tests.conftest import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
WORKFLOW = yaml.safe_load((REPO / "examples" / "github" / "coderefine-review.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def review_step() -> dict:
    (step,) = [s for s in ACTION["runs"]["steps"] if "coderefine review" in s.get("run", "")]
    return step


def action_step() -> dict:
    (step,) = [s for s in WORKFLOW["jobs"]["review"]["steps"] if "coderefine" in s.get("uses", "")]
    return step


def test_the_action_is_composite_and_installs_itself_from_its_own_checkout():
    assert ACTION["runs"]["using"] == "composite"
    install = ACTION["runs"]["steps"][0]
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}" and '"$ACTION_PATH"' in install["run"]
    assert all(step.get("shell") == "bash" for step in ACTION["runs"]["steps"])


def test_every_input_the_action_uses_is_declared_and_every_declared_one_is_used():
    declared = set(ACTION["inputs"])
    used = {
        match.group(1).removeprefix("inputs.")
        for step in ACTION["runs"]["steps"]
        for value in step.get("env", {}).values()
        for match in EXPRESSION.finditer(str(value))
        if match.group(1).startswith("inputs.")
    }
    assert used == declared
    for required in ("task", "model", "base-url", "api-key", "github-token", "min-speedup", "paths"):
        assert required in declared
    assert ACTION["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_inputs_reach_the_command_only_through_the_environment():
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step["run"], step["run"]  # an expression in a script is an injection risk
    env = review_step()["env"]
    assert env["OPENAI_API_KEY"] == "${{ inputs.api-key }}" and "OPENAI_API_KEY" not in review_step()["run"]
    assert env["GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    for name in env:
        if name.startswith("CODEREFINE_"):
            assert name.removeprefix("CODEREFINE_").lower() in SPEC_BY_NAME, name


def test_the_command_and_its_options_exist():
    command = typer.main.get_command(app).commands["review"]
    options = {opt for param in command.params for opt in param.opts}
    used = re.findall(r"(--[a-z-]+)", review_step()["run"])
    assert review_step()["run"].startswith("coderefine review ") and used
    assert set(used) <= options


def test_the_review_step_runs_as_written(tmp_path):
    """The step's script with the environment Actions would give it: it parses, and outside a pull
    request job it stops with exit 18 (not 2: every option is known)."""
    step = review_step()
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update({name: str(value) for name, value in action_step()["with"].items() if "${{" not in str(value)})
    inputs["github-token"] = "ghs_placeholder"
    env = {
        name: EXPRESSION.sub(lambda m: inputs[m.group(1).removeprefix("inputs.")], str(value))
        for name, value in step["env"].items()
    }
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    proc = subprocess.run(
        ["bash", "-c", step["run"]],
        env={"PATH": path, "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 18, proc.stderr
    assert proc.stderr.startswith("error: GITHUB_EVENT_PATH and GITHUB_REPOSITORY not set")


def test_the_example_workflow_passes_existing_inputs_with_the_permissions_it_needs():
    assert WORKFLOW["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert "pull_request" in WORKFLOW[True]  # PyYAML reads the key `on` as True
    unknown = set(action_step()["with"]) - set(ACTION["inputs"])
    assert not unknown, unknown
    missing = {name for name, spec in ACTION["inputs"].items() if spec.get("required")} - set(action_step()["with"])
    assert not missing
    (checkout,) = [s for s in WORKFLOW["jobs"]["review"]["steps"] if s.get("uses", "").startswith("actions/checkout")]
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    assert action_step()["with"]["api-key"] == "${{ secrets.OPENAI_API_KEY }}"
