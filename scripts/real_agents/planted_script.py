"""The 'planted facts' script of the scripted server (`scripted_upstream.py --script planted`).

It drives a session in which facts whose fate we know are planted, for the labelled
evaluation of `ctxlab forgot` (docs/forgot.md, tests/it/forgot_eval.rs): constraints in a
task file the agent reads through a tool, dot files written, an error the summary quotes,
decisions (one the agent states, one the user types in the first prompt, one the task
file records: `planted.py` writes the last two), narration, exception names in library
source, a `git pull` diffstat, log lines with "error:", bare numbers. The summary it
writes carries some of them and leaves out the others; the turn after the compaction
reads a lost file again, runs a failing command again and has the user restate a lost
instruction. When the agent offers its plan tool
(`planted.py --plan`), the turn also sets a pending plan the summary does not carry.

The default script of the server is untouched: this one runs only when asked for.
"""

import re

# Written into the summary; the server's other answers do not use it, so its presence in a
# request marks the turn after the compaction.
SUMMARY_MARK = "Planted summary."

SUMMARY_TEXT = (
    SUMMARY_MARK + " The user asked to do the task in TASK.md. The assistant read TASK.md and "
    "vendor/lib/compiler.py, wrote .gitleaks.toml and .github/workflows/ci.yml. "
    "Do not edit vendor/. The check (python3 tools/check.py) failed: settings/production.local.yaml "
    "is missing key retention_days. Next: finish the remaining work."
)


# The pending plan: one item done, one under way, one not started. The summary names none.
PLAN = [
    ("Read TASK.md", "completed"),
    ("Add the cache tests to make test", "in_progress"),
    ("Document the cache in README.md", "pending"),
]

TODOS = {"todos": [{"content": c, "status": s, "activeForm": c} for c, s in PLAN]}

UPDATE_PLAN = {"explanation": "The task's steps.", "plan": [{"step": c, "status": s} for c, s in PLAN]}


def plan_steps(plan_tool):
    """The plan, when the agent offers a plan tool: Claude Code's `TodoWrite` (2.1.332 offers
    it only with CLAUDE_CODE_ENABLE_TASKS=false, and deferred: loaded through ToolSearch
    first, as the model would), Codex's `update_plan` (`[tools.update_plan] enabled`)."""
    if plan_tool == "TodoWrite":
        return [
            ("Loading the todo tool.", "ToolSearch", {"query": "select:TodoWrite"}),
            ("Planning the work.", "TodoWrite", TODOS),
        ]
    if plan_tool == "update_plan":
        return [("Planning the work.", "update_plan", UPDATE_PLAN)]
    return []


def steps(cwd: str, plan_tool=None):
    """Turn one's tool calls, in order: (narration text, tool name, input)."""
    return [
        ("Let me now read the key files I'll be modifying.", "Bash", {"command": "cat TASK.md", "description": "read the task"}),
        *plan_steps(plan_tool),
        ("Reading the compiler.", "Bash", {"command": "cat vendor/lib/compiler.py", "description": "read library source"}),
        ("Pulling.", "Bash", {"command": "sh tools/fake_pull.sh", "description": "git pull"}),
        ("Writing the gitleaks config.", "Write", {"file_path": f"{cwd}/.gitleaks.toml", "content": "[allowlist]\npaths = ['''vendor/''']\n"}),
        ("Writing the workflow.", "Write", {"file_path": f"{cwd}/.github/workflows/ci.yml", "content": "name: ci\non: [push]\n"}),
        ("Decision: we will store expansion state in the session table rather than in the browser.", "Write", {"file_path": f"{cwd}/src/cache.py", "content": "CACHE = {}\n\ndef reset():\n    pass\n"}),
        ("Running the check.", "Bash", {"command": "python3 tools/check.py", "description": "config check"}),
        ("Running the linter.", "Bash", {"command": "sh tools/lint.sh", "description": "lint"}),
        ("Reading the log.", "Bash", {"command": "cat logs/app.log", "description": "log"}),
    ]


FINAL_TEXT = (
    "Let me now look at what remains. The build took 24 hours at 5% load."
)

AFTER_STEPS = [
    ("Reading the cache module again.", "Bash", {"command": "cat src/cache.py", "description": "read again"}),
    ("Running the linter again.", "Bash", {"command": "sh tools/lint.sh", "description": "lint"}),
]

CWD_RE = re.compile(r"(?:Primary working directory|Working directory|cwd):\s*(\S+)")


def texts(value):
    """Every string inside a request body, so the working directory is found wherever the
    agent states it (system prompt or a reminder in the first message)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from texts(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from texts(v)


def cwd_of(body: dict) -> str:
    for text in texts([body.get("system"), body.get("messages")]):
        m = CWD_RE.search(text)
        if m:
            return m.group(1)
    return "/tmp"


def after_compaction(body: dict) -> bool:
    return SUMMARY_MARK in str(body.get("messages"))


def claude_plan_tool(body: dict):
    """"TodoWrite" when Claude Code offers it, loaded or deferred (named in a reminder)."""
    return "TodoWrite" if "TodoWrite" in str(body.get("tools")) + str(body.get("messages"))[:200_000] else None


def next_call(body: dict, step: int):
    """The step'th call of the turn, or None when the turn answers with text."""
    script = AFTER_STEPS if after_compaction(body) else steps(cwd_of(body), claude_plan_tool(body))
    return script[step] if step < len(script) else None


def final_text(body: dict) -> str:
    return "Done again." if after_compaction(body) else FINAL_TEXT


def codex_command(call) -> str:
    """Codex is offered a shell only: a write step becomes a shell command writing the file."""
    _, name, tool_input = call
    if name == "Bash":
        return tool_input["command"]
    path = tool_input["file_path"]
    content = tool_input["content"].replace("'", "'\\''")
    return f"mkdir -p \"$(dirname '{path}')\" && printf '%s' '{content}' > '{path}'"


def codex_after_compaction(items) -> bool:
    return SUMMARY_MARK in str(items)


def codex_next_call(items, step: int, tool_names=()):
    """The step'th call of a Codex turn: the same script, paths relative to the project."""
    plan_tool = "update_plan" if "update_plan" in tool_names else None
    script = AFTER_STEPS if codex_after_compaction(items) else steps(".", plan_tool)
    return script[step] if step < len(script) else None


def codex_final_text(items) -> str:
    return "Done again." if codex_after_compaction(items) else FINAL_TEXT


# Reported on turn one's last answer so that Codex compacts before the next turn (its
# auto-compact limit is far below it), not in the middle of the planted steps.
CODEX_ANSWER_USAGE_BONUS = 60_000
