"""The GitHub workflows and the landing gate: valid, and wired as the README says.

The workflows are validated against the GitHub Actions workflow schema that check-jsonschema
ships (offline), and their structure is checked here: tests run the README's command on every
push and pull request, with the latest versions and Colab's floor; the book is published only
from a commit of main whose tests passed.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


def _load(name):
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    # YAML 1.1 reads the key `on` as True.
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def _steps(job):
    return job["steps"]


def _runs(job):
    return [step["run"].strip() for step in _steps(job) if "run" in step]


def _uses(job, action):
    return [step for step in _steps(job) if step.get("uses", "").startswith(action)]


def _check_jsonschema(*paths):
    pytest.importorskip("check_jsonschema")
    cmd = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows"]
    return subprocess.run(cmd + [str(p) for p in paths], capture_output=True, text=True)


def test_workflows_match_the_github_actions_schema():
    result = _check_jsonschema(*sorted(WORKFLOWS.glob("*.yml")))
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_rejects_a_broken_workflow(tmp_path):
    broken = _load("tests.yml")
    del broken["jobs"]["test"]["runs-on"]
    broken["on"] = {"push": {"branchez": ["main"]}}
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump(broken))
    assert _check_jsonschema(path).returncode != 0


def test_tests_run_the_readme_command_on_every_push_and_pull_request():
    workflow = _load("tests.yml")
    assert {"push", "pull_request"} <= set(workflow["on"])
    assert workflow["on"]["push"] is None and workflow["on"]["pull_request"] is None  # no branch filter
    (job,) = workflow["jobs"].values()
    targets = {entry["target"] for entry in job["strategy"]["matrix"]["include"]}
    assert targets == {"test", "test-floor"}
    assert job["strategy"]["fail-fast"] is False
    assert "make ${{ matrix.target }}" in _runs(job)
    (setup,) = _uses(job, "actions/setup-python@")
    assert setup["with"]["cache"] == "pip"


def test_floor_target_pins_colab_versions():
    makefile = (ROOT / "Makefile").read_text()
    pins = re.search(r"^FLOOR_PINS := (.*)$", makefile, flags=re.M).group(1)
    for pin in (
        "jax==0.7.2",
        "jaxlib==0.7.2",
        "flax==0.11.2",
        "optax==0.2.8",
        "ipywidgets==7.7.1",
        "numpy==2.1",
    ):
        assert pin in pins
    assert re.search(r"^test-floor:", makefile, flags=re.M)


def test_book_is_published_only_after_tests_passed_on_main():
    tests_name = _load("tests.yml")["name"]
    workflow = _load("book.yml")
    assert set(workflow["on"]) == {"workflow_run"}  # no push or manual trigger around the tests
    trigger = workflow["on"]["workflow_run"]
    assert trigger == {"workflows": [tests_name], "types": ["completed"], "branches": ["main"]}
    build = workflow["jobs"]["build"]
    assert "github.event.workflow_run.conclusion == 'success'" in build["if"]
    (checkout,) = _uses(build, "actions/checkout@")
    assert checkout["with"]["ref"] == "${{ github.event.workflow_run.head_sha }}"  # the tested commit
    assert "make book" in _runs(build)
    assert workflow["jobs"]["deploy"]["needs"] == "build"
    assert _uses(workflow["jobs"]["deploy"], "actions/deploy-pages@")


def test_landing_gate_runs_readme_command_lint_then_floor():
    script = (ROOT / ".ci" / "run").read_text()
    subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")], check=True)
    calls = re.findall(r"^(?:run_tests \S+ )?(make [\w-]+)\s*$", script, flags=re.M)
    assert calls == ["make test", "make lint", "make slides", "make test-floor"]
    assert "set -euo pipefail" in script
