"""Installing and driving the real Claude Code and Codex CLIs, offline, for the harness.

Both install from the npm registry into a cache folder outside the clone (never globally),
at pinned versions, and run against `scripted_upstream.py` through `ctxlab proxy`: every
model request goes 127.0.0.1 -> proxy -> scripted server, so nothing leaves the machine.
Each agent gets a HOME of its own inside the run's work folder, so the user's real
`~/.claude` and `~/.codex` are never read or written.
"""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_VERSION = "2.1.332"
CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.171.0"
CLAUDE_MODEL = "claude-sonnet-4-6"
CODEX_MODEL = "gpt-5.1-codex"
# Codex compacts by itself once the reported usage passes this; the scripted server's
# growing usage crosses it on the second turn.
CODEX_AUTO_COMPACT_TOKENS = 30000
# Per agent command: none of them should take more than a few seconds offline.
AGENT_TIMEOUT_S = 120


class HarnessError(Exception):
    """Something the harness needs did not work: always fatal, never a skip."""


def default_cache() -> Path:
    env = os.environ.get("CTXLAB_AGENTS_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ctxlab-real-agents"


def install(cache: Path) -> dict:
    """The two CLIs at their pinned versions under `cache`; installs them when missing."""
    bins = {"claude": cache / "node_modules/.bin/claude", "codex": cache / "node_modules/.bin/codex"}
    wanted = {"claude": CLAUDE_VERSION, "codex": CODEX_VERSION}
    if all(_version(path) and wanted[name] in _version(path) for name, path in bins.items()):
        return bins
    if not shutil.which("npm"):
        raise HarnessError("npm is not installed: the real agents install from the npm registry (apt-get install npm)")
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [
        "npm", "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
        "--prefix", str(cache),
        f"{CLAUDE_PACKAGE}@{CLAUDE_VERSION}", f"{CODEX_PACKAGE}@{CODEX_VERSION}",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise HarnessError(f"npm install failed ({result.returncode}):\n{result.stderr[-3000:]}")
    for name, path in bins.items():
        version = _version(path)
        if not version or wanted[name] not in version:
            raise HarnessError(f"{path} says {version!r}, expected {wanted[name]}")
    return bins


def _version(path: Path):
    if not path.exists():
        return None
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


class Service:
    """A background process of the harness (server, proxy, watch), stopped on exit."""

    def __init__(self, name, cmd, log_dir: Path, env=None, stdout_path=None):
        self.name = name
        self.stderr_path = log_dir / f"{name}.err"
        self.stdout_path = stdout_path or (log_dir / f"{name}.out")
        self._out = open(self.stdout_path, "wb")
        self._err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=self._err, stdin=subprocess.DEVNULL, env=env)

    def wait_for_stderr(self, needle: str, timeout=30.0) -> str:
        deadline = time.time() + timeout
        while time.time() < deadline:
            text = self.stderr_path.read_text(errors="replace")
            if needle in text:
                return text
            if self.proc.poll() is not None:
                raise HarnessError(f"{self.name} exited {self.proc.returncode}:\n{text[-2000:]}")
            time.sleep(0.05)
        raise HarnessError(f"{self.name} did not say {needle!r} in {timeout} s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        self._err.close()


def agent_env(home: Path) -> dict:
    """The environment an agent runs in: its own HOME, no key of the person running this."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CODEX_", "CLAUDE_"))}
    env["HOME"] = str(home)
    env["DISABLE_TELEMETRY"] = "1"
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    env["DISABLE_AUTOUPDATER"] = "1"
    env["NO_COLOR"] = "1"
    return env


def run_agent(cmd, cwd: Path, env: dict, log: Path):
    """Runs one agent command to its end; its output goes to `log`; a failure is fatal."""
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        try:
            result = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out, timeout=AGENT_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise HarnessError(f"{cmd[0]} did not finish in {AGENT_TIMEOUT_S} s (log: {log})") from e
    if result.returncode != 0:
        raise HarnessError(f"{' '.join(cmd[:3])} exited {result.returncode} (log: {log}):\n{log.read_text(errors='replace')[-2000:]}")


def claude_command(bins, *args):
    return [str(bins["claude"]), "--model", CLAUDE_MODEL, "--allowedTools", "Bash", *args]


def claude_env(home: Path, proxy_url: str) -> dict:
    env = agent_env(home)
    env["ANTHROPIC_BASE_URL"] = proxy_url
    env["ANTHROPIC_API_KEY"] = CLAUDE_KEY
    return env


def codex_env(home: Path) -> dict:
    env = agent_env(home)
    env["CODEX_HOME"] = str(home / ".codex")
    env["SCRIPTED_KEY"] = "sk-harness-not-a-key"
    return env


def write_codex_config(home: Path, proxy_url: str):
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{CODEX_MODEL}"\n'
        'model_provider = "scripted"\n'
        f"model_auto_compact_token_limit = {CODEX_AUTO_COMPACT_TOKENS}\n"
        "[model_providers.scripted]\n"
        'name = "scripted"\n'
        f'base_url = "{proxy_url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "SCRIPTED_KEY"\n'
    )


def write_codex_openai_config(home: Path, proxy_url: str):
    """Codex's built-in OpenAI provider pointed at the proxy (`openai_base_url`; 0.171 reads
    no `OPENAI_BASE_URL` for it): it talks the Responses WebSocket transport by default."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{CODEX_MODEL}"\n'
        f"model_auto_compact_token_limit = {CODEX_AUTO_COMPACT_TOKENS}\n"
        f'openai_base_url = "{proxy_url}/v1"\n'
    )


def codex_openai_env(home: Path) -> dict:
    env = codex_env(home)
    env["OPENAI_API_KEY"] = "sk-harness-not-a-key"
    return env


def codex_command(bins, prompt, resume=False):
    cmd = [str(bins["codex"]), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"]
    if resume:
        cmd += ["resume", "--last"]
    return cmd + [prompt]


CLAUDE_KEY = "sk-ant-harness-not-a-key"


def write_claude_interactive_settings(home: Path, project: Path, statusline_cmd: str):
    """What Claude Code needs to start interactively without questions: onboarding done, the
    folder trusted, the key from the environment approved (it asks once per key, and keeps
    the key's last 20 characters), and our status line command."""
    state_path = home / ".claude.json"
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    state["hasCompletedOnboarding"] = True
    state["customApiKeyResponses"] = {"approved": [CLAUDE_KEY[-20:]], "rejected": []}
    state["bypassPermissionsModeAccepted"] = True
    projects = state.setdefault("projects", {})
    entry = projects.setdefault(str(project), {})
    entry["hasTrustDialogAccepted"] = True
    entry["hasCompletedProjectOnboarding"] = True
    state_path.write_text(json.dumps(state))
    settings_dir = home / ".claude"
    settings_dir.mkdir(parents=True, exist_ok=True)
    settings_path = settings_dir / "settings.json"
    settings = json.loads(settings_path.read_text()) if settings_path.exists() else {}
    settings["statusLine"] = {"type": "command", "command": statusline_cmd, "padding": 0}
    settings_path.write_text(json.dumps(settings))
