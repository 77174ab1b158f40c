"""The 'subagent' script of the scripted server (`scripted_upstream.py --script subagent`).

Claude Code's turn delegates one step to a subagent through its `Agent` tool (in the
foreground, so the turn waits for it); the subagent runs one Bash command and reports.
Claude Code writes the subagent's transcript as a file of its own under the session's
folder (`<session>/subagents/agent-*.jsonl`, `isSidechain` lines): the source of the fork
tests' sidechain fixture (docs/fork.md). The default script of the server is untouched.
"""

# The subagent's prompt starts with it, so its requests are told from the main agent's.
SUBAGENT_MARK = "SUBAGENT-TASK:"

AGENT_INPUT = {
    "description": "Run one scripted step",
    "prompt": SUBAGENT_MARK + " run `echo subagent-step` and report what it printed.",
    "subagent_type": "general-purpose",
    "run_in_background": False,
}


def first_user_text(body: dict) -> str:
    for m in body.get("messages") or []:
        if m.get("role") == "user":
            return str(m.get("content"))
    return ""


def is_subagent(body: dict) -> bool:
    return SUBAGENT_MARK in first_user_text(body)


def answer(body: dict, step: int):
    """(kind, narration, tool name or None, tool input) for this request."""
    if is_subagent(body):
        if step == 0:
            return ("tool_call", "Running the step.", "Bash", {"command": "echo subagent-step", "description": "the subagent's step"})
        return ("answer", "SUBAGENT-REPORT: echo printed subagent-step.", None, None)
    if step == 0:
        return ("tool_call", "Delegating the step to a subagent.", "Agent", AGENT_INPUT)
    return ("answer", "Done: the subagent reported.", None, None)
